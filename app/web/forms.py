"""One shape for every form a competition page posts: the CSRF token is checked before anything
else, the handler calls a service, and the browser goes back to the form's page with either the
outcome or, when the service refuses, its message (raised, so the request's session rolls back;
app.web.errors turns it into the redirect). A handler is then the service call and its message.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response, UploadFile
from sqlalchemy.orm import Session

from app.deps import SessionDep
from app.errors import Unprocessable
from app.models import Competition, User
from app.web.competition import HostedCompetition, PageCompetition, back_to
from app.web.session import CsrfChecked, SignedInUser, redirect


def form_post(router: APIRouter, path: str, *, back: str) -> Callable[[Any], Any]:
    """Register a form's POST handler whose page is ``/c/{slug}`` + ``back``."""
    return router.post(path, dependencies=[CsrfChecked, back_to(back)])


@dataclass(frozen=True)
class Visit:
    """Who is on which competition's page (or posted its form), through this request."""

    request: Request
    competition: Competition
    session: Session
    user: User

    def done(self, message: str) -> Response:
        """The service said yes: back to the form's page, saying what happened."""
        return redirect(self.request, self.request.state.back, ok=message)


def _member_visit(
    request: Request, competition: PageCompetition, session: SessionDep, user: SignedInUser
) -> Visit:
    return Visit(request, competition, session, user)


def _host_visit(
    request: Request, competition: HostedCompetition, session: SessionDep, user: SignedInUser
) -> Visit:
    return Visit(request, competition, session, user)


# A signed-in user's form on a competition page; the services decide what they may do.
MemberForm = Annotated[Visit, Depends(_member_visit)]
# A host page's form, and the page: anyone but the competition's hosts gets the 403 page first.
HostForm = Annotated[Visit, Depends(_host_visit)]
HostPage = Annotated[Visit, Depends(_host_visit)]


def chosen(file: UploadFile | None, what: str) -> UploadFile:
    """The form's file, or the refusal of a form sent without one."""
    if file is None or not file.filename:
        raise Unprocessable(f"choose {what} to upload")
    return file
