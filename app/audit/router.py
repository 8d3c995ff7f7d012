from fastapi import APIRouter

from app.audit import service
from app.audit.schemas import AuditEntryPublic
from app.deps import HostedCompetitionDep, SessionDep

router = APIRouter(tags=["audit"])


@router.get("/competitions/{slug}/audit", response_model=list[AuditEntryPublic])
def audit_log(competition: HostedCompetitionDep, session: SessionDep) -> list[AuditEntryPublic]:
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
        for e in service.entries(session, competition=competition)
    ]
