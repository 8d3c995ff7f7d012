"""Simulation phases' jobs on the code lane: an agent's validation episode, the ladder's episodes,
and the scheduler that keeps each phase's ladder playing.

- **Validation**: a new agent is claimed like a code run (under its submission's lease, one run
  per team at a time) and plays one episode against copies of itself. Any seat ending in
  ``ERROR``, ``TIMEOUT`` or ``INVALID`` fails the submission with the reason (Kaggle's
  "Validation Episode failed"); else it is ``scored``, enters the ladder with the prior (μ₀, σ₀),
  and the team's agents beyond its newest N stop playing.
- **An episode**: claimed by one conditional UPDATE (``attempts`` is the token), played with no
  transaction open, then its result, its seats and the ratings it moves are written in one
  transaction, only while the token still holds it: a worker dying mid-episode loses nothing (the
  sweep hands the episode out again: :func:`sweep_episodes`), and a worker whose lease lapsed and
  was taken over writes nothing, so no episode moves a rating twice.
- **The scheduler** (:func:`schedule`): keeps ``episodes_in_flight`` ladder episodes waiting or
  running per phase, seats chosen by :mod:`app.simulation.ladder`, until the phase's end plus its
  settling period.

Each function returns the ids of the episodes it queued, for the caller's queue to hand out.
"""

import gzip
import json
import logging
import random
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session, joinedload, sessionmaker

from app.coderun.code import InvalidCode
from app.config import Settings
from app.db import unit_of_work
from app.jail.bwrap import JailUnavailable
from app.jobs.lease import give_up, held, renewing
from app.jobs.turns import claim_run
from app.models import (
    AgentRating,
    Episode,
    EpisodeAgent,
    Phase,
    Submission,
    SubmissionStatus,
)
from app.models.simulation import (
    EPISODE_DONE,
    EPISODE_FAILED,
    EPISODE_LADDER,
    EPISODE_QUEUED,
    EPISODE_RUNNING,
    EPISODE_VALIDATION,
)
from app.simulation.agents import unpack_agent
from app.simulation.environments import (
    EnvironmentConfig,
    EnvironmentError_,
    make,
    players,
    stored_config,
    upload_of,
)
from app.simulation.episode import EpisodeOutcome, run_episode
from app.simulation.hosted import InvalidEnvironment, read_environment
from app.simulation.jailed import AgentLimits
from app.simulation.ladder import Entrant, choose
from app.simulation.ratings import MU0, SIGMA0, Skill, rate
from app.simulation.settings import SimulationSettings
from app.simulation.tables import EnvironmentFailed
from app.storage import local_file

log = logging.getLogger(__name__)

MAX_REPLAY_BYTES = 64 * 1024**2  # a replay's JSON before compression; past it, steps are dropped
MAX_LOG_BYTES = 4 * 1024**2  # one seat's log JSON before compression
PLATFORM_FAILURE = (
    "the validation episode could not be played because of a problem on our side; the host has "
    "been notified"
)
_FINAL = (SubmissionStatus.scored, SubmissionStatus.failed)


def _now() -> datetime:
    return datetime.now(UTC)


@cache
def players_of(name: str) -> int:
    """How many seats an episode of the environment has (the configuration does not change it)."""
    return players(make(EnvironmentConfig(name=name)))


def _limits(settings: SimulationSettings) -> AgentLimits:
    return AgentLimits(memory_mb=settings.memory_mb, cpus=settings.cpus)


@dataclass(frozen=True)
class Seat:
    submission_id: int
    team_id: int
    filename: str
    path: str


def seats_of(stored: dict[str, Any]) -> int:
    """How many agents play one episode of the phase's environment."""
    if stored.get("players"):
        return int(stored["players"])  # a host's own: counted when it was uploaded
    return players_of(str(stored["name"]))


def _play(
    stored: dict[str, Any],
    seats: list[Seat],
    sim: SimulationSettings,
    server: Settings,
) -> EpisodeOutcome:
    """Unpack each distinct agent once (world-readable: the jail's user reads it), and a host's
    own environment, and play."""
    environment = stored_config(stored)
    upload = upload_of(stored)
    with tempfile.TemporaryDirectory(prefix="podium-episode-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)
        hosted = None
        if upload is not None:
            hosted = root / "environment"
            hosted.mkdir(mode=0o755)
            read_environment(local_file(upload["ref"], settings=server).read_bytes(), hosted)
        folders: dict[int, Path] = {}
        for seat in seats:
            if seat.submission_id in folders:
                continue
            folder = root / str(seat.submission_id)
            folder.mkdir(mode=0o755)
            data = local_file(seat.path, settings=server).read_bytes()
            unpack_agent(seat.filename, data, folder, max_bytes=server.code_max_bytes)
            folders[seat.submission_id] = folder
        return run_episode(
            environment,
            [folders[s.submission_id] for s in seats],
            _limits(sim),
            overage_seconds=sim.overage_seconds,
            hosted=hosted,
        )


def _gz(document: Any, limit: int) -> bytes:
    data = json.dumps(document, default=str).encode()
    if len(data) > limit:
        raise ValueError(f"{len(data)} bytes, past {limit}")
    return gzip.compress(data, compresslevel=6)


def _replay_bytes(outcome: EpisodeOutcome) -> bytes:
    try:
        return _gz(outcome.replay, MAX_REPLAY_BYTES)
    except ValueError as exc:
        kept = {k: v for k, v in outcome.replay.items() if k != "steps"}
        kept["steps"] = []
        kept["truncated"] = f"the replay's steps were dropped: {exc}"
        return _gz(kept, MAX_REPLAY_BYTES)


def _log_bytes(document: dict[str, Any]) -> bytes:
    try:
        return _gz(document, MAX_LOG_BYTES)
    except ValueError as exc:
        steps = document.get("steps", [])
        short = {**document, "steps": steps[:50], "truncated": f"steps after the 50th: {exc}"}
        return gzip.compress(json.dumps(short, default=str)[:MAX_LOG_BYTES].encode())


# --- validation ----------------------------------------------------------------------------------


def validate_agent(
    factory: sessionmaker[Session], submission_id: int, settings: Settings
) -> list[int]:
    """Claim a new agent, play its validation episode, settle the submission; the ids of ladder
    episodes this queued (none when another worker holds it or it is settled)."""
    with unit_of_work(factory) as session:
        submission = session.get(Submission, submission_id, options=[joinedload(Submission.phase)])
        if submission is None or submission.status in _FINAL:
            return []
        phase = submission.phase
        if submission.attempts >= settings.scoring_max_attempts:
            give_up(submission, settings)
            return []
        lease = claim_run(session, submission, seconds=settings.scoring_lease_seconds)
        if lease is None:
            return []
        stored = dict(phase.environment or {})
        sim = SimulationSettings.model_validate(phase.simulation or {})
        seat = Seat(submission.id, submission.team_id, submission.filename, submission.path)
        phase_id, competition_id = phase.id, submission.competition_id
    run_for = float(stored_config(stored).configuration.get("runTimeout", 1200)) + 120
    error = host_error = None
    outcome: EpisodeOutcome | None = None
    with renewing(factory, lease, until=run_for):
        try:
            outcome = _play(stored, [seat] * seats_of(stored), sim, settings)
        except InvalidCode as exc:
            error = f"Validation Episode failed: {exc}"
        except (
            JailUnavailable,
            EnvironmentError_,
            EnvironmentFailed,
            InvalidEnvironment,
            OSError,
            ValueError,
        ) as exc:
            log.error("submission %s: the validation episode failed: %r", submission_id, exc)
            host_error = f"the validation episode could not be played: {exc}"
    with unit_of_work(factory) as session:
        submission = session.get(Submission, submission_id)
        still = session.scalar(select(Submission.id).where(held(lease)))
        if submission is None or still is None:
            return []  # taken over meanwhile: the other claim settles it
        submission.finished_at = _now()
        submission.lease_expires_at = None
        if outcome is not None:
            _record(session, outcome, [seat] * len(outcome.agents), phase_id, competition_id)
            failed = [(i, a) for i, a in enumerate(outcome.agents) if a.failed]
            if outcome.unfinished:
                failed = failed or [(0, None)]
            if failed:
                index, agent = failed[0]
                reason = (
                    f"{agent.status} in seat {index + 1}: {agent.reason or agent.status}"
                    if agent
                    else outcome.unfinished
                )
                error = f"Validation Episode failed: {reason}"
                submission.run_failure = (agent.status.lower() if agent else "timeout")[:32]
                text = agent.process_log if agent else ""
                submission.log_tail = text[-64 * 1024 :] or None
        if host_error is not None:
            submission.status = SubmissionStatus.failed
            submission.error, submission.host_error = PLATFORM_FAILURE, host_error
            submission.refunded = True
            return []
        if error is not None:
            submission.status = SubmissionStatus.failed
            submission.error = error
            return []
        submission.status = SubmissionStatus.scored
        # An agent sent after the phase's end is validated (its team learns whether it works)
        # but never enters the ladder: the end stops new agents.
        late = submission.late or submission.baseline
        session.add(
            AgentRating(
                submission_id=submission.id,
                phase_id=phase_id,
                team_id=submission.team_id,
                mu=MU0,
                sigma=SIGMA0,
                episodes=0,
                active=not late,
            )
        )
        session.flush()
        if late:
            return []
        _keep_newest(session, phase_id, submission.team_id, sim.active_agents)
    return schedule(factory, phase_id)


def _keep_newest(session: Session, phase_id: int, team_id: int, keep: int) -> None:
    """Each team's newest ``keep`` valid agents play on; the older ones stop (their rating and
    episodes stay, shown on their page)."""
    active = session.scalars(
        select(AgentRating.submission_id)
        .where(
            AgentRating.phase_id == phase_id,
            AgentRating.team_id == team_id,
            AgentRating.active.is_(True),
        )
        .order_by(AgentRating.submission_id.desc())
    ).all()
    retired = list(active[keep:])
    if retired:
        session.execute(
            update(AgentRating)
            .where(AgentRating.submission_id.in_(retired))
            .values(active=False)
            .execution_options(synchronize_session=False)
        )


def _record(
    session: Session,
    outcome: EpisodeOutcome,
    seats: list[Seat],
    phase_id: int,
    competition_id: int,
) -> Episode:
    """A validation episode, done, with its seats (no rating moves)."""
    configuration = dict(outcome.replay.get("configuration") or {})
    episode = Episode(
        competition_id=competition_id,
        phase_id=phase_id,
        kind=EPISODE_VALIDATION,
        status=EPISODE_DONE,
        attempts=1,
        started_at=_now(),
        finished_at=_now(),
        environment={"name": outcome.replay.get("name"), "configuration": configuration},
        steps=outcome.steps,
        replay=_replay_bytes(outcome),
        error=outcome.unfinished,
    )
    session.add(episode)
    session.flush()
    for position, (seat, agent) in enumerate(zip(seats, outcome.agents, strict=True)):
        session.add(
            EpisodeAgent(
                episode_id=episode.id,
                submission_id=seat.submission_id,
                team_id=seat.team_id,
                position=position,
                status=agent.status,
                reward=agent.reward,
                reason=agent.reason,
                log=_log_bytes(agent.log_json()),
            )
        )
    return episode


# --- the ladder ----------------------------------------------------------------------------------


def schedule(
    factory: sessionmaker[Session],
    phase_id: int,
    *,
    rng: random.Random | None = None,
    at: datetime | None = None,
) -> list[int]:
    """Queue ladder episodes for the phase up to its ``episodes_in_flight``; their ids."""
    rng = rng or random.Random()
    at = at or _now()
    with unit_of_work(factory) as session:
        phase = session.get(Phase, phase_id)
        if phase is None or not phase.takes_agents or not phase.environment:
            return []
        sim = SimulationSettings.model_validate(phase.simulation or {})
        if phase.end is not None and at >= phase.end + timedelta(hours=sim.settle_hours):
            return []  # settled: the board is final
        waiting = session.scalar(
            select(func.count(Episode.id)).where(
                Episode.phase_id == phase_id,
                Episode.kind == EPISODE_LADDER,
                Episode.status.in_((EPISODE_QUEUED, EPISODE_RUNNING)),
            )
        )
        room = sim.episodes_in_flight - int(waiting or 0)
        if room <= 0:
            return []
        entrants = _entrants(session, phase_id)
        seats_per_episode = seats_of(dict(phase.environment))
        made = []
        for _ in range(room):
            seats = choose(entrants, seats_per_episode, rng, explore=sim.explore)
            if seats is None:
                break
            episode = Episode(
                competition_id=phase.competition_id,
                phase_id=phase_id,
                kind=EPISODE_LADDER,
                status=EPISODE_QUEUED,
                environment=dict(phase.environment),
            )
            session.add(episode)
            session.flush()
            for position, entrant in enumerate(seats):
                session.add(
                    EpisodeAgent(
                        episode_id=episode.id,
                        submission_id=entrant.submission_id,
                        team_id=entrant.team_id,
                        position=position,
                    )
                )
            chosen = {e.submission_id for e in seats}
            entrants = [
                Entrant(e.submission_id, e.team_id, e.mu, e.sigma, e.played + 1)
                if e.submission_id in chosen
                else e
                for e in entrants
            ]
            made.append(episode.id)
    return made


def _entrants(session: Session, phase_id: int) -> list[Entrant]:
    """The phase's active agents, each with its episodes played plus those waiting for it."""
    pending = (
        select(EpisodeAgent.submission_id, func.count(EpisodeAgent.id).label("n"))
        .join(Episode, Episode.id == EpisodeAgent.episode_id)
        .where(
            Episode.phase_id == phase_id,
            Episode.kind == EPISODE_LADDER,
            Episode.status.in_((EPISODE_QUEUED, EPISODE_RUNNING)),
        )
        .group_by(EpisodeAgent.submission_id)
        .subquery()
    )
    rows = session.execute(
        select(AgentRating, func.coalesce(pending.c.n, 0))
        .outerjoin(pending, pending.c.submission_id == AgentRating.submission_id)
        .where(AgentRating.phase_id == phase_id, AgentRating.active.is_(True))
        .order_by(AgentRating.submission_id)
    ).all()
    return [
        Entrant(r.submission_id, r.team_id, r.mu, r.sigma, r.episodes + int(n)) for r, n in rows
    ]


def _claim_episode(session: Session, episode_id: int, seconds: float) -> int | None:
    at = _now()
    claimed = session.execute(
        update(Episode)
        .where(
            Episode.id == episode_id,
            or_(
                Episode.status == EPISODE_QUEUED,
                and_(Episode.status == EPISODE_RUNNING, Episode.lease_expires_at < at),
            ),
        )
        .values(
            status=EPISODE_RUNNING,
            attempts=Episode.attempts + 1,
            started_at=at,
            lease_expires_at=at + timedelta(seconds=seconds),
        )
        .returning(Episode.attempts)
        .execution_options(synchronize_session=False)
    ).scalar()
    return None if claimed is None else int(claimed)


def _episode_held(episode_id: int, attempt: int):  # type: ignore[no-untyped-def]
    return and_(
        Episode.id == episode_id, Episode.status == EPISODE_RUNNING, Episode.attempts == attempt
    )


@contextmanager
def _renewing_episode(
    factory: sessionmaker[Session], episode_id: int, attempt: int, seconds: float, until: float
) -> Iterator[None]:
    """Renew the episode's lease every third of its length while the block runs (at most
    ``until`` seconds: an episode stuck past its limit lets its lease lapse)."""
    stop = threading.Event()

    def renew() -> None:
        deadline = _now() + timedelta(seconds=until)
        while not stop.wait(seconds / 3) and _now() < deadline:
            try:
                with unit_of_work(factory) as session:
                    session.execute(
                        update(Episode)
                        .where(_episode_held(episode_id, attempt))
                        .values(lease_expires_at=_now() + timedelta(seconds=seconds))
                        .execution_options(synchronize_session=False)
                    )
            except Exception:  # noqa: BLE001 - a database hiccup: try again next round
                log.warning("could not renew the lease on episode %s", episode_id)

    thread = threading.Thread(target=renew, name=f"episode-{episode_id}-lease", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def play_episode(factory: sessionmaker[Session], episode_id: int, settings: Settings) -> list[int]:
    """Claim a queued ladder episode, play it, write its result and move its agents' ratings;
    the ids of the episodes queued after it (the ladder goes on)."""
    seconds = settings.scoring_lease_seconds
    with unit_of_work(factory) as session:
        episode = session.get(Episode, episode_id)
        if episode is None or episode.status in (EPISODE_DONE, EPISODE_FAILED):
            return []
        if episode.attempts >= settings.scoring_max_attempts:
            episode.status, episode.finished_at = EPISODE_FAILED, _now()
            episode.error = f"the episode did not finish in {episode.attempts} attempt(s)"
            return []
        attempt = _claim_episode(session, episode_id, seconds)
        if attempt is None:
            return []
        phase = session.get(Phase, episode.phase_id)
        assert phase is not None
        stored = dict(phase.environment or {})
        sim = SimulationSettings.model_validate(phase.simulation or {})
        rows = session.execute(
            select(EpisodeAgent.position, Submission)
            .join(Submission, Submission.id == EpisodeAgent.submission_id)
            .where(EpisodeAgent.episode_id == episode_id)
            .order_by(EpisodeAgent.position)
        ).all()
        seats = [Seat(s.id, s.team_id, s.filename, s.path) for _, s in rows]
        phase_id = phase.id
    run_for = float(stored_config(stored).configuration.get("runTimeout", 1200)) + 120
    outcome: EpisodeOutcome | None = None
    error = None
    with _renewing_episode(factory, episode_id, attempt, seconds, run_for):
        try:
            outcome = _play(stored, seats, sim, settings)
        except (
            JailUnavailable,
            EnvironmentError_,
            EnvironmentFailed,
            InvalidEnvironment,
            InvalidCode,
            OSError,
            ValueError,
        ) as exc:
            log.error("episode %s could not be played: %r", episode_id, exc)
            error = f"the episode could not be played: {exc}"
    if not finish_episode(factory, episode_id, attempt, seats, outcome, error):
        return []  # the lease was lost and taken over: the other claim writes the result
    return schedule(factory, phase_id)


def finish_episode(
    factory: sessionmaker[Session],
    episode_id: int,
    attempt: int,
    seats: list["Seat"],
    outcome: EpisodeOutcome | None,
    error: str | None = None,
) -> bool:
    """Write the episode's result, its seats and the ratings it moves in one transaction, while
    claim ``attempt`` still holds it; False (nothing written) once another claim took it over."""
    with unit_of_work(factory) as session:
        values: dict[str, Any] = {"finished_at": _now(), "lease_expires_at": None}
        if outcome is None or outcome.unfinished:
            values.update(status=EPISODE_FAILED, error=error or (outcome and outcome.unfinished))
        else:
            values.update(status=EPISODE_DONE, steps=outcome.steps, replay=_replay_bytes(outcome))
        won = session.execute(
            update(Episode)
            .where(_episode_held(episode_id, attempt))
            .values(**values)
            .execution_options(synchronize_session=False)
        ).rowcount  # type: ignore[attr-defined]
        if not won:
            return False
        if outcome is not None and not outcome.unfinished:
            _settle(session, episode_id, seats, outcome)
    return True


def _settle(session: Session, episode_id: int, seats: list[Seat], outcome: EpisodeOutcome) -> None:
    """Each seat's end and log, and the ratings the episode moves, read as they stand now."""
    ids = sorted({s.submission_id for s in seats})
    ratings = {
        r.submission_id: r
        for r in session.scalars(
            select(AgentRating)
            .where(AgentRating.submission_id.in_(ids))
            .order_by(AgentRating.submission_id)
            .with_for_update()
        )
    }
    skills = [Skill(ratings[s.submission_id].mu, ratings[s.submission_id].sigma) for s in seats]
    after = rate(skills, [a.reward for a in outcome.agents])
    seat_rows = {
        row.position: row
        for row in session.scalars(
            select(EpisodeAgent).where(EpisodeAgent.episode_id == episode_id)
        )
    }
    at = _now()
    for position, (seat, agent) in enumerate(zip(seats, outcome.agents, strict=True)):
        row = seat_rows[position]
        before = skills[position]
        row.status, row.reward, row.reason = agent.status, agent.reward, agent.reason
        row.mu_before, row.sigma_before = before.mu, before.sigma
        row.mu_after, row.sigma_after = after[position].mu, after[position].sigma
        row.log = _log_bytes(agent.log_json())
        rating = ratings[seat.submission_id]
        rating.mu, rating.sigma = after[position].mu, after[position].sigma
        rating.episodes += 1
        rating.updated_at = at


# --- the sweep -----------------------------------------------------------------------------------


def sweep_episodes(factory: sessionmaker[Session], *, grace_seconds: float = 0.0) -> list[int]:
    """Episodes to hand out again, and each simulation phase's ladder topped up: queued ones
    whose delivery is overdue (waiting ``grace_seconds`` since they were queued or last handed
    out: the broker was down, the server died before its thread got to them) and running ones
    whose lease lapsed (their worker died; the claim takes them back)."""
    at = _now()
    grace = timedelta(seconds=grace_seconds)
    with unit_of_work(factory) as session:
        overdue = or_(
            and_(
                Episode.status == EPISODE_QUEUED,
                or_(
                    and_(Episode.lease_expires_at.is_(None), Episode.created_at <= at - grace),
                    Episode.lease_expires_at <= at,
                ),
            ),
            and_(Episode.status == EPISODE_RUNNING, Episode.lease_expires_at < at),
        )
        ids = list(session.scalars(select(Episode.id).where(overdue).order_by(Episode.id)))
        if ids:
            # A queued episode's next delivery is due after another grace period, not at every
            # pass (a running one keeps its lapsed lease: the claim looks at it).
            session.execute(
                update(Episode)
                .where(Episode.id.in_(ids), Episode.status == EPISODE_QUEUED)
                .values(lease_expires_at=at + grace)
                .execution_options(synchronize_session=False)
            )
        phases = list(
            session.scalars(select(Phase.id).where(Phase.submission_kind == "simulation"))
        )
    for phase_id in phases:
        ids += schedule(factory, phase_id)
    return ids
