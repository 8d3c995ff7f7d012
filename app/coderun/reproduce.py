"""The hosts' "Reproduce the winners" (issue 43): each ranked team's counted submissions of a
code phase are queued to run again in the jail, on the same inputs, and the run's output and
score compared with the ones recorded (app.jobs.reproduce runs them and appends each result to
the record). A prediction phase has no code to run: its hosts ask the top teams to attach the
code behind their submissions instead (``PUT …/submissions/{id}/code``, chained with its hash).
"""

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit.service import record
from app.errors import Conflict, NotFound
from app.models import Competition, Phase, Reproduction, Standing, Team, User
from app.models.phase import BOARD_PUBLIC

# Teams a request takes at most: each is a code run of up to the phase's wall limit.
MAX_TEAMS = 50


def _phase(competition: Competition, name: str | None) -> Phase:
    if name is None:
        code = [p for p in competition.phases if p.takes_code]
        if len(code) == 1:
            return code[0]
        if not code:
            raise Conflict(_no_code(competition.phases[0] if competition.phases else None))
        raise Conflict("several phases take code: name the one to reproduce ('phase')")
    for phase in competition.phases:
        if phase.name == name:
            return phase
    raise NotFound(f"phase '{name}' not found")


def _no_code(phase: Phase | None) -> str:
    named = f"phase '{phase.name}' takes" if phase is not None else "this competition takes"
    return (
        f"{named} prediction files, not code: there is nothing to run again. Ask the top teams "
        "to attach the code behind their submissions (PUT /api/v1/competitions/{slug}/"
        "submissions/{id}/code); each attachment is chained with its SHA-256"
    )


def request(
    session: Session,
    *,
    competition: Competition,
    actor: User,
    phase_name: str | None = None,
    top: int = 3,
) -> list[Reproduction]:
    """Queue the counted submissions of the phase's ``top`` ranked teams: once it has ended,
    by the private board (the one that decides the winners) and its counted submissions on both
    boards; before, by a public board and its counted submissions alone."""
    phase = _phase(competition, phase_name)
    if not phase.takes_code:
        raise Conflict(_no_code(phase))
    key = phase.board_key
    if key is None:
        raise Conflict(f"phase '{phase.name}' has no published answer key: nothing is ranked")
    # The record is public: which submissions are reproduced must tell nobody more than the
    # boards already do. Before the phase ends, only a public board's ranking and its counted
    # submissions (the private board's order, and a hidden or blind board, are not out yet).
    ended = phase.has_ended(datetime.now(UTC))
    if not ended and phase.board != BOARD_PUBLIC:
        raise Conflict(
            f"phase '{phase.name}' has a {phase.board} board until it ends: reproduce its "
            "winners once it has ended"
        )
    boards = ("private", "public") if ended else ("public",)
    standings = session.execute(
        select(Standing.board, Standing.team_id, Standing.submission_id)
        .join(Team, Team.id == Standing.team_id)
        .where(Standing.answer_key_id == key.id, Standing.baseline.is_(False))
        .order_by(Standing.board, Standing.order_key, Standing.tie_key, Standing.submitted_at)
    ).all()
    ranked = [team for board, team, _sub in standings if board == boards[0]] or [
        team for board, team, _sub in standings if board == "public"
    ]
    winners = {team: rank for rank, team in enumerate(ranked[: min(top, MAX_TEAMS)], start=1)}
    if not winners:
        raise Conflict(f"phase '{phase.name}' has no ranked team yet")
    rows: list[Reproduction] = []
    seen: set[int] = set()
    for board in boards:
        for row_board, team, submission_id in standings:
            if row_board != board or team not in winners or submission_id in seen:
                continue
            seen.add(submission_id)
            rows.append(
                Reproduction(
                    competition_id=competition.id,
                    phase_id=phase.id,
                    submission_id=submission_id,
                    team_id=team,
                    rank=winners[team],
                    requested_by_id=actor.id,
                )
            )
    session.add_all(rows)
    session.flush()
    first = min(r.id for r in rows)
    for row in rows:
        row.request = first
    record(
        session,
        competition=competition,
        actor=actor,
        action="reproduce_winners",
        target=phase.name,
        after={"request": first, "submissions": sorted(seen), "top": len(winners)},
    )
    return sorted(rows, key=lambda r: (r.rank or 0, r.submission_id))


def report(
    session: Session, *, competition: Competition, request_id: int | None = None
) -> list[tuple[Reproduction, str]]:
    """The runs of one request (the latest when none is named), ranked first."""
    if request_id is None:
        request_id = session.scalar(
            select(Reproduction.request)
            .where(Reproduction.competition_id == competition.id)
            .order_by(Reproduction.request.desc())
            .limit(1)
        )
        if request_id is None:
            return []
    rows = session.execute(
        select(Reproduction, Team.name)
        .join(Team, Team.id == Reproduction.team_id)
        .where(Reproduction.competition_id == competition.id, Reproduction.request == request_id)
        .order_by(Reproduction.rank, Reproduction.submission_id)
    ).all()
    if not rows:
        raise NotFound(f"reproduction {request_id} not found")
    return [(row, name) for row, name in rows]


def team_names(session: Session, team_ids: list[int]) -> list[tuple[int, str]]:
    rows = session.execute(select(Team.id, Team.name).where(Team.id.in_(team_ids))).all()
    return [(team_id, name) for team_id, name in rows]
