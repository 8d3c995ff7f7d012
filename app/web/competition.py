"""What every competition page needs: the competition (or a 404 page) and the tab bar's facts."""

from typing import Annotated, Any

from fastapi import Depends, Request

from app.competitions.service import get_competition_by_slug, to_public
from app.competitions.visibility import READ_METHODS
from app.deps import SessionDep
from app.models import Competition, Role, User
from app.web.access import may_host
from app.web.session import HostsOnly, SignedInUser, WebUser

# Boards for anyone who is not this competition's host: the participant's rules apply.
VISITOR = User(name="visitor", role=Role.participant)


def page_competition(
    request: Request, slug: str, session: SessionDep, user: WebUser
) -> Competition:
    # The API's visibility rule: a draft is its hosts' alone, an archived one takes no forms.
    return get_competition_by_slug(session, slug, user, writing=request.method not in READ_METHODS)


PageCompetition = Annotated[Competition, Depends(page_competition)]


def hosted_competition(
    competition: PageCompetition, session: SessionDep, user: SignedInUser
) -> Competition:
    if not may_host(session, competition=competition, user=user):
        raise HostsOnly("these pages are for this competition's hosts only")
    return competition


HostedCompetition = Annotated[Competition, Depends(hosted_competition)]


def tab_context(
    session: Any, competition: Competition, user: User | None, tab: str
) -> dict[str, Any]:
    return {
        "c": to_public(competition),
        "competition": competition,
        "tab": tab,
        "is_host": may_host(session, competition=competition, user=user),
    }


def back_to(suffix: str = ""):  # type: ignore[no-untyped-def]
    """A dependency naming the page a failed form returns to: ``/c/{slug}`` + ``suffix``."""

    async def remember(request: Request, slug: str) -> None:
        request.state.back = f"/c/{slug}{suffix}"

    return Depends(remember)
