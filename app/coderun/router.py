from typing import Annotated

from fastapi import APIRouter, Query

from app.coderun import reproduce
from app.coderun.runtime import runtime_fingerprint, runtime_info
from app.coderun.schemas import (
    ReproductionCreate,
    ReproductionReport,
    ReproductionRun,
    RuntimePublic,
)
from app.deps import CurrentUser, HostedCompetitionDep, SessionDep
from app.errors import error_responses
from app.models import Reproduction
from app.models.types import Count

router = APIRouter(prefix="/runtime", tags=["code competitions"])
reproductions = APIRouter(
    prefix="/competitions/{slug}/reproductions",
    tags=["code competitions"],
    responses=error_responses(401, 403, 404),
)


@router.get("", response_model=RuntimePublic)
def get_runtime(user: CurrentUser) -> RuntimePublic:
    """The runtime every code submission runs in: Python's version and each package's."""
    return RuntimePublic(**runtime_info(), fingerprint=runtime_fingerprint())


def _report(rows: list[tuple[Reproduction, str]]) -> ReproductionReport:
    return ReproductionReport(
        request=rows[0][0].request if rows else None,
        runs=[
            ReproductionRun(
                submission_id=row.submission_id,
                team=team,
                rank=row.rank,
                status=row.status,
                outcome=row.outcome,
                finished_at=row.finished_at,
                details=row.details or {},
            )
            for row, team in rows
        ],
    )


@reproductions.post(
    "", status_code=202, response_model=ReproductionReport, responses=error_responses(409, 422)
)
def reproduce_winners(
    body: ReproductionCreate,
    competition: HostedCompetitionDep,
    user: CurrentUser,
    session: SessionDep,
) -> ReproductionReport:
    """Reproduce the winners (hosts): each of the ``top`` ranked teams' counted submissions
    of a code phase runs again in the jail, as a job; each result goes into the record."""
    rows = reproduce.request(
        session, competition=competition, actor=user, phase_name=body.phase, top=body.top
    )
    names = dict(reproduce.team_names(session, [r.team_id for r in rows]))
    return _report([(r, names.get(r.team_id, "")) for r in rows])


@reproductions.get("", response_model=ReproductionReport)
def reproduction_report(
    competition: HostedCompetitionDep,
    session: SessionDep,
    request: Annotated[Count | None, Query()] = None,
) -> ReproductionReport:
    """The report of a reproduction (the latest, or ``request``): equal or not per team."""
    return _report(reproduce.report(session, competition=competition, request_id=request))
