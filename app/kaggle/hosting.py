"""The official client's host commands that change a competition's text and settings:
``competitions create`` (from competition-metadata.json, which ``competitions init`` writes on
the host's machine), ``settings update`` and ``pages``. Each is Podium's own service with its
own host check; what Kaggle has and Podium does not is refused with a sentence saying so."""

import re
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.auth.hosts import require_host
from app.competitions.schemas import CompetitionCreate, CompetitionUpdate
from app.competitions.service import (
    create_competition,
    get_competition_by_slug,
    update_competition,
)
from app.errors import BadRequest, Conflict, Forbidden, NotFound
from app.http.messages import sentence
from app.kaggle import schemas as k
from app.kaggle.service import Context, get_competition_settings_call
from app.models import Competition, User
from app.models.competition import DRAFT

# The metric a new draft starts with, as the New competition page's first step gives it: the
# client has no metric to send; the host picks the board's columns on the page the answer's URL
# opens (a draft's columns change freely until it is launched).
FIRST_METRIC = "roc_auc"
# Kaggle's privacy: PUBLIC is open to anyone; LIMITED and PRIVATE keep the others out, which
# on Podium is entry by the hosts' invitation.
_REGISTRATION = {"PUBLIC": "open", "LIMITED": "invite", "PRIVATE": "invite"}


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"]) or "request"
    return f"{field}: {sentence(dict(error))}"


def create_competition_call(
    session: Session, user: User, req: k.CreateCompetitionRequest, ctx: Context
) -> k.CreateCompetitionResponse:
    """``kaggle competitions create``: a draft only its hosts see, as the New competition
    page's first step makes (organisers only, as ``POST /api/v1/competitions``)."""
    if not user.is_organiser:
        raise Forbidden(
            "only organisers may create competitions: ask a site admin to make you one, or to "
            "add you as a co-host of theirs"
        )
    if req.clone_competition_id is not None:
        raise BadRequest(
            "Podium does not clone competitions: export one (podium competitions export SLUG) "
            "and import the bundle (podium competitions import)"
        )
    if req.hackathon:
        raise BadRequest("Podium has no hackathons: leave 'hackathon' false")
    privacy = req.privacy.removeprefix("COMPETITION_PRIVACY_")
    registration = _REGISTRATION.get(privacy, "open" if privacy == "UNSPECIFIED" else "")
    if not registration:
        raise BadRequest(f"privacy '{req.privacy[:30]}' is not PUBLIC, LIMITED or PRIVATE")
    try:
        data = CompetitionCreate(
            slug=req.slug,
            title=req.title,
            description=req.brief_description,
            metric={"name": FIRST_METRIC},
            status="draft",
            registration=registration,
        )
    except ValidationError as exc:
        raise BadRequest(_first_error(exc)) from None
    competition = create_competition(session, data=data, owner=user)
    return k.CreateCompetitionResponse(
        id=competition.id,
        ref=competition.slug,
        url=f"{ctx.base_url}c/{competition.slug}/host/new/columns",
    )


# --- settings update ------------------------------------------------------------------------

# Kaggle's settings that are Podium's too (the JSON name → CompetitionUpdate's).
_SETTINGS = {
    "title": "title",
    "deadline": "deadline",
    "teamMergerExplicitDeadline": "team_merge_deadline",
}
# Why the others are refused when they would change (a value equal to what ``settings get``
# shows is accepted, so that its output can be sent back).
_NO_SUCH_SETTING = {
    "briefDescription": "the description is a page: kaggle competitions pages update "
    "--page-name description",
    "competitionName": "a competition's address never changes",
    "disableSubmissions": "submissions stop at the deadline; a competition is closed for good "
    "with podium competitions archive",
    "hasLeaderboard": "a phase's board is public, hidden or blind: podium competitions phase",
    "rulesRequired": "the rules must be accepted when the rules page has text: kaggle "
    "competitions pages update --page-name rules",
}


def _camel(path: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), path.strip())


def _plain(value: Any) -> Any:
    """A value as the client leaves it out when it is its type's default."""
    return None if value in (None, "", False, 0) else value


def update_competition_settings_call(
    session: Session, user: User, req: k.UpdateCompetitionSettingsRequest, ctx: Context
) -> k.CompetitionSettings:
    """``kaggle competitions settings update``: the fields the update mask names, for the
    competition's hosts, through the audited settings change (``PATCH .../{slug}``)."""
    competition = get_competition_by_slug(session, req.competition_name, user, writing=True)
    require_host(session, competition, user)
    paths = [_camel(p) for p in req.update_mask.split(",") if p.strip()]
    if not paths:
        raise BadRequest("no settings to update: the file names no field")
    sent = req.settings.model_dump(mode="json", by_alias=True)
    current = get_competition_settings_call(session, user, req, ctx).to_json()
    changes: dict[str, Any] = {}
    for path in paths:
        if path in _SETTINGS:
            changes[_SETTINGS[path]] = sent.get(path) or None
        elif _plain(sent.get(path)) != _plain(current.get(path)):
            why = _NO_SUCH_SETTING.get(path, "it has no meaning on Podium")
            raise BadRequest(f"Podium has no setting '{path[:64]}' to change: {why}")
    if "title" in changes and changes["title"] is None:
        raise BadRequest("title: a competition needs a title")
    try:
        data = CompetitionUpdate.model_validate(changes)
    except ValidationError as exc:
        raise BadRequest(_first_error(exc)) from None
    update_competition(session, competition=competition, data=data, actor=user)
    return get_competition_settings_call(session, user, req, ctx)


# --- pages ----------------------------------------------------------------------------------

# A Podium competition's pages: its description and its rules, both Markdown.
PAGES = ("description", "rules")
_MARKDOWN = (None, "", "text/markdown", "text/x-markdown", "text/plain")


def _text(competition: Competition, name: str) -> str:
    return str(competition.description if name == "description" else competition.rules)


def _page(competition: Competition, name: str) -> k.CompetitionPage:
    return k.CompetitionPage(
        name=name,
        content=_text(competition, name),
        is_published=competition.status != DRAFT,
        mime_type="text/markdown",
    )


def _page_name(name: str) -> str:
    if name not in PAGES:
        raise NotFound(
            f"Podium has no page '{name[:64]}': a competition's pages are its description and "
            "its rules (write an evaluation, data or timeline section into the description)"
        )
    return name


def _check_page_fields(competition: Competition, page: k.CompetitionPage, fields: set[str]) -> None:
    """Refuse what a Podium page cannot be: another format, its own title, staged apart from
    the competition."""
    if "mimeType" in fields and page.mime_type not in _MARKDOWN:
        raise BadRequest(
            f"Podium's pages are Markdown, and {page.mime_type!r} would show as plain text: "
            "give --mime-type text/markdown, or none"
        )
    if "postTitle" in fields and page.post_title:
        raise BadRequest("a Podium page has no title of its own: leave --post-title out")
    if "isPublished" in fields and page.is_published is False and competition.status != DRAFT:
        raise Conflict(
            f"'{competition.slug}' is launched, and its pages are shown with it: Podium stages "
            "no page apart from the competition (add --publish)"
        )


def _set_text(session: Session, competition: Competition, name: str, text: str, user: User) -> None:
    data = CompetitionUpdate.model_validate({name: text})
    update_competition(session, competition=competition, data=data, actor=user)


def list_competition_pages_call(
    session: Session, user: User, req: k.ListCompetitionPagesRequest, ctx: Context
) -> k.ListCompetitionPagesResponse:
    """Its pages that have text, for whoever sees the competition (as its page shows them)."""
    competition = get_competition_by_slug(session, req.competition_name, user)
    names = [n for n in PAGES if req.page_name in (None, "", n)]
    return k.ListCompetitionPagesResponse(
        pages=[_page(competition, n) for n in names if _text(competition, n)]
    )


def create_competition_page_call(
    session: Session, user: User, req: k.CreateCompetitionPageRequest, ctx: Context
) -> k.CompetitionPage:
    competition = get_competition_by_slug(session, req.competition_name, user, writing=True)
    require_host(session, competition, user)
    name = _page_name(req.page.name)
    fields = set(req.page.model_dump(by_alias=True, exclude_unset=True))
    _check_page_fields(competition, req.page, fields)
    if _text(competition, name):
        raise Conflict(
            f"'{competition.slug}' has its {name} page already: change it with kaggle "
            f"competitions pages update {competition.slug} --page-name {name} -f FILE"
        )
    _set_text(session, competition, name, req.page.content, user)
    return _page(competition, name)


def update_competition_page_call(
    session: Session, user: User, req: k.UpdateCompetitionPageRequest, ctx: Context
) -> k.CompetitionPage:
    competition = get_competition_by_slug(session, req.competition_name, user, writing=True)
    require_host(session, competition, user)
    name = _page_name(req.page_name)
    fields = {_camel(p) for p in req.update_mask.split(",") if p.strip()}
    if not fields:
        raise BadRequest("nothing to update: give the page's new text (-f FILE)")
    if "name" in fields and req.page.name != name:
        raise BadRequest(
            "a Podium page keeps its name: the description and the rules are the two pages"
        )
    _check_page_fields(competition, req.page, fields)
    if "content" in fields:
        _set_text(session, competition, name, req.page.content, user)
    return _page(competition, name)


def delete_competition_page_call(
    session: Session, user: User, req: k.DeleteCompetitionPageRequest, ctx: Context
) -> k.Message:
    """A page's text removed (the rules: no rules to accept any more); audited as a change."""
    competition = get_competition_by_slug(session, req.competition_name, user, writing=True)
    require_host(session, competition, user)
    name = _page_name(req.page_name)
    if not _text(competition, name):
        raise NotFound(f"'{competition.slug}' has no {name} page to delete")
    _set_text(session, competition, name, "", user)
    return k.Message()
