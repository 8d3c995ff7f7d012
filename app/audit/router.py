from fastapi import APIRouter

from app.audit import service
from app.audit.schemas import AuditEntryPublic
from app.deps import HostedCompetitionDep, SessionDep
from app.errors import error_responses
from app.pagination import PAGE_HEADERS, PageDep

router = APIRouter(tags=["audit"], responses=error_responses(403, 404))


@router.get(
    "/competitions/{slug}/audit", response_model=list[AuditEntryPublic], responses=PAGE_HEADERS
)
def audit_log(
    competition: HostedCompetitionDep, session: SessionDep, page: PageDep
) -> list[AuditEntryPublic]:
    found = service.entries(session, competition=competition, page=page)
    page.tell_total(found.total)
    return [
        AuditEntryPublic(
            id=e.id,
            actor=e.actor.name,
            action=e.action,
            target=e.target,
            before=e.before,
            after=e.after,
            created_at=e.created_at,
        )
        for e in found.items
    ]
