"""What My submissions shows of one phase: its tabs, the columns a team's scores come in (each
with its digits), the phases an upload may go to, and the phase's quota. The scores themselves
come from :mod:`app.submissions.visibility`, which already shows nothing of a score in a blind
phase before it ends."""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from app.coderun.outcome import KAGGLE_WORDS
from app.competitions.phases import board_phase
from app.episodes.service import may_see_ratings, submission_episodes
from app.errors import NotFound
from app.evaluation.columns import columns_for
from app.evaluation.rounding import shown_decimals
from app.models import AgentRating, Competition, Phase, Submission, Team, User
from app.models.phase import COUNTS_BEST, COUNTS_CHOSEN
from app.submissions import service, visibility
from app.submissions.quota import quota_for
from app.submissions.schemas import QuotaPublic
from app.teams.service import find_team
from app.web.boards import digits, phase_tabs
from app.web.charts import score_over_time


@dataclass(frozen=True)
class OwnPage:
    phase: Phase
    team: Team | None
    quota: QuotaPublic


def own_page(
    session: Session, *, competition: Competition, user: User, phase_name: str | None
) -> OwnPage:
    """The phase My submissions shows (named, else the current one), the caller's team and its
    quota in that phase."""
    phase = board_phase(competition, phase_name)
    team = find_team(session, competition=competition, user=user)
    quota = quota_for(
        session, competition=competition, team=team, now=datetime.now(UTC), phase=phase
    )
    return OwnPage(phase, team, quota)


def submissions_page(
    competition: Competition, phase: Phase, *, is_host: bool, now: datetime
) -> dict[str, Any]:
    """The page's facts beside the rows: tabs, score columns, counting rule, upload phases."""
    decimals = shown_decimals(competition, host=is_host)
    columns = [
        {"key": c.key, "title": c.title or c.key, "digits": digits(c.precision, decimals)}
        for c in columns_for(competition, phase)
        if is_host or not c.hidden
    ]
    phases = list(competition.phases)
    # Hosts' baselines may go into any phase; everyone else's into one open now.
    targets = phases if is_host else [p for p in phases if p.is_open(now)]
    # The entry fields asked: the upload's default phase's (the service checks them against
    # the phase the form names).
    asked = phase if phase in targets or not targets else targets[0]
    return {
        "phase": phase,
        "entry_fields": [
            {
                **f,
                "title": f.get("title") or f["key"].replace("_", " ").capitalize(),
                "input": "url" if f["key"].endswith("_url") else "text",
            }
            for f in asked.entry_fields or []
        ],
        "phase_tabs": phase_tabs(competition, phase, f"/c/{competition.slug}/submissions", now),
        "several_phases": len(phases) > 1,
        "score_columns": columns,
        "selectable": phase.counts == COUNTS_CHOSEN,
        "counts_best": phase.counts == COUNTS_BEST,
        "upload_phases": targets if len(targets) > 1 else [],
        # A code phase takes a script, a notebook or a zip, and its rows link to their runs.
        "takes_code": asked.takes_code,
        "code_phase": phase.takes_code,
        "default_upload": asked.name,
        "poll": f"/c/{competition.slug}/submissions.json"
        + (f"?phase={phase.name}" if len(phases) > 1 else ""),
    }


def _agent(session: Session, submission: Submission, user: User) -> dict[str, Any]:
    """A simulation agent's rating, its μ over its ladder episodes, and its episodes."""
    episodes = submission_episodes(session, submission_id=submission.id, user=user)
    points = [
        (e.finished_at, seat.mu_after)
        for e in reversed(episodes)
        if e.kind == "ladder" and e.finished_at is not None
        for seat in e.agents
        if seat.submission_id == submission.id and seat.mu_after is not None
    ]
    # A blind phase shows its team no rating until it ends, as it shows no score.
    shown = may_see_ratings(session, submission, user, own=True)
    return {
        "rating": session.get(AgentRating, submission.id) if shown else None,
        "episodes": episodes,
        "chart": score_over_time({"μ": points}, maximize=True, metric="μ") if points else "",
    }


def submission_page(
    session: Session, *, competition: Competition, submission_id: int, user: User
) -> dict[str, Any]:
    """One submission for its team or a host (anyone else: 404): its status, why it failed in
    Kaggle's words and ours, and for a code submission its run's log and provenance."""
    submission = service.visible_submission(session, submission_id=submission_id, user=user)
    if submission.competition_id != competition.id:
        raise NotFound(f"no submission {submission_id}")
    run = None
    ingested = (submission.phase.scorer or {}).get("ingestion") and submission.log_bytes is not None
    if submission.phase.takes_code or ingested:
        try:
            run = service.submission_log(session, submission_id=submission_id, user=user)
        except NotFound:
            run = None  # an ingestion log the bundle keeps from the team
    return {
        "agent": _agent(session, submission, user) if submission.phase.takes_agents else None,
        "submission": visibility.view(
            session, submission=submission, competition=competition, user=user
        ),
        "submission_phase": submission.phase,
        "run": run,
        "kaggle_words": KAGGLE_WORDS.get(submission.run_failure or ""),
    }
