"""Reading episodes: an agent's episodes, an episode's replay, a seat's log.

Replays are anyone's who may see the competition (Kaggle shows every episode); a seat's log is
its team's and the hosts' only, and anyone else is told it does not exist. A submission's
episodes are public once it entered the ladder; before that (its validation) its team's and the
hosts' only, as the submission itself is.
"""

import gzip
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from app.auth.hosts import is_host
from app.competitions.visibility import is_visible
from app.episodes.schemas import EpisodePublic, SeatPublic
from app.errors import Forbidden, NotFound
from app.leaderboard.service import refuse_hidden_board
from app.models import AgentRating, Competition, Episode, EpisodeAgent, Submission, Team, User
from app.models.phase import BOARD_HIDDEN
from app.models.simulation import EPISODE_DONE, EPISODE_LADDER
from app.submissions.service import is_member

MAX_EPISODES = 1000  # the newest, in one list


def _may_see_team(session: Session, submission: Submission, user: User | None) -> bool:
    return user is not None and (
        is_host(session, submission.competition, user)
        or is_member(session, team_id=submission.team_id, user=user)
    )


def submission_episodes(
    session: Session, *, submission_id: int, user: User | None
) -> list[EpisodePublic]:
    submission = session.get(Submission, submission_id)
    missing = NotFound(f"no submission {submission_id}")
    if submission is None or not submission.phase.takes_agents:
        raise missing
    if not is_visible(session, submission.competition, user):
        raise missing
    own = _may_see_team(session, submission, user)
    if session.get(AgentRating, submission_id) is None and not own:
        raise missing
    query = (
        select(Episode)
        .where(
            Episode.id.in_(
                select(EpisodeAgent.episode_id).where(EpisodeAgent.submission_id == submission_id)
            )
        )
        .options(joinedload(Episode.agents))
        .order_by(Episode.id.desc())
        .limit(MAX_EPISODES)
    )
    if not own:  # a validation is its submission's, which is its team's
        query = query.where(Episode.kind != "validation")
    episodes = list(session.scalars(query).unique())
    teams = _team_names(session, episodes)
    hide = not may_see_ratings(session, submission, user, own=own)
    return [_public(e, teams, hide_ratings=hide) for e in episodes]


def may_see_ratings(
    session: Session, submission: Submission, user: User | None, *, own: bool
) -> bool:
    """Ratings are scores: a blind phase shows them to its hosts only until it ends, a hidden
    one to its hosts and each team its own (the board's rule, :func:`refuse_hidden_board`)."""
    phase = submission.phase
    if phase.board == BOARD_HIDDEN and own:
        return True
    if user is not None and is_host(session, submission.competition, user):
        return True
    try:
        refuse_hidden_board(phase, datetime.now(UTC))
    except Forbidden:
        return False
    return True


def _team_names(session: Session, episodes: list[Episode]) -> dict[int, str]:
    ids = {seat.team_id for e in episodes for seat in e.agents}
    if not ids:
        return {}
    return dict(session.execute(select(Team.id, Team.name).where(Team.id.in_(ids))).all())


def _public(episode: Episode, teams: dict[int, str], *, hide_ratings: bool) -> EpisodePublic:
    def shown(value: float | None) -> float | None:
        return None if hide_ratings else value

    return EpisodePublic(
        id=episode.id,
        kind=episode.kind,
        status=episode.status,
        created_at=episode.created_at,
        finished_at=episode.finished_at,
        steps=episode.steps,
        agents=[
            SeatPublic(
                position=seat.position,
                submission_id=seat.submission_id,
                team=teams.get(seat.team_id, ""),
                status=seat.status,
                reward=seat.reward,
                mu_before=shown(seat.mu_before),
                sigma_before=shown(seat.sigma_before),
                mu_after=shown(seat.mu_after),
                sigma_after=shown(seat.sigma_after),
            )
            for seat in episode.agents
        ],
    )


def _visible_episode(session: Session, episode_id: int, user: User | None) -> Episode:
    episode = session.get(Episode, episode_id, options=[joinedload(Episode.agents)])
    missing = NotFound(f"no episode {episode_id}")
    if episode is None:
        raise missing
    seat = episode.agents[0] if episode.agents else None
    submission = session.get(Submission, seat.submission_id) if seat else None
    if submission is None or not is_visible(session, submission.competition, user):
        raise missing
    if episode.kind == "validation" and not _may_see_team(session, submission, user):
        raise missing  # a validation is its submission's, which is its team's
    return episode


def replay(session: Session, *, episode_id: int, user: User | None) -> dict[str, Any]:
    """Kaggle's replay JSON of a finished episode (``Environment.toJSON``)."""
    episode = _visible_episode(session, episode_id, user)
    if episode.replay is None:
        raise NotFound(f"episode {episode_id} has no replay: it is {episode.status}")
    document: dict[str, Any] = json.loads(gzip.decompress(episode.replay))
    return document


def seat_log(
    session: Session, *, episode_id: int, position: int, user: User | None
) -> dict[str, Any]:
    """One seat's log: its team's and the hosts' only; anyone else hears it does not exist."""
    episode = _visible_episode(session, episode_id, user)
    seat = next((s for s in episode.agents if s.position == position), None)
    missing = NotFound(f"episode {episode_id} has no log of agent {position} for you")
    if seat is None:
        raise missing
    submission = session.get(Submission, seat.submission_id)
    if submission is None or not _may_see_team(session, submission, user):
        raise missing
    if seat.log is None:
        raise NotFound(f"episode {episode_id} has no log of agent {position} yet")
    document: dict[str, Any] = json.loads(gzip.decompress(seat.log))
    return document


def seat_of(episode: Episode, submission_id: int) -> EpisodeAgent | None:
    return next((s for s in episode.agents if s.submission_id == submission_id), None)


# --- an agent's page ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RatingPoint:
    """The agent's skill after its ``n``-th rated episode (0: the prior it entered with)."""

    n: int
    episode_id: int | None
    mu: float
    sigma: float


@dataclass(frozen=True)
class AgentView:
    """One agent (a submission of a simulation phase) as its public page shows it. ``own``: the
    viewer is its team or a host (its validation episode and its logs are theirs)."""

    submission: Submission
    team: str
    rating: AgentRating
    history: list[RatingPoint]
    episodes: list[EpisodePublic]
    own: bool


def agent_view(
    session: Session, *, competition: Competition, submission_id: int, user: User | None
) -> AgentView:
    """An agent's rating over its episodes and its episodes, for anyone who may see the phase's
    board: 404 for what is not an agent of this competition that entered the ladder (its team and
    hosts aside: they see it from its validation on), the board's own refusal (403) for a blind
    phase before it ends or a hidden one, where only hosts (and, hidden, the agent's own team)
    see ratings."""
    submission = session.get(Submission, submission_id)
    missing = NotFound(f"no agent {submission_id} in this competition")
    if submission is None or submission.competition_id != competition.id:
        raise missing
    if not submission.phase.takes_agents or not is_visible(session, competition, user):
        raise missing
    own = _may_see_team(session, submission, user)
    rating = session.get(AgentRating, submission_id)
    if rating is None:  # not on the ladder: its validation failed or is still to come
        raise missing
    if not may_see_ratings(session, submission, user, own=own):
        refuse_hidden_board(submission.phase, datetime.now(UTC))  # the board's own words
    team = session.get(Team, submission.team_id)
    return AgentView(
        submission=submission,
        team=team.name if team else "",
        rating=rating,
        history=rating_history(session, submission_id=submission_id),
        episodes=submission_episodes(session, submission_id=submission_id, user=user),
        own=own,
    )


def rating_history(session: Session, *, submission_id: int) -> list[RatingPoint]:
    """The agent's (μ, σ) after each of its rated episodes, oldest first, from the prior on.
    One query, two floats a row: thousands of episodes cost little."""
    rows = session.execute(
        select(
            Episode.id,
            EpisodeAgent.mu_before,
            EpisodeAgent.sigma_before,
            EpisodeAgent.mu_after,
            EpisodeAgent.sigma_after,
        )
        .join(Episode, Episode.id == EpisodeAgent.episode_id)
        .where(
            EpisodeAgent.submission_id == submission_id,
            Episode.kind == EPISODE_LADDER,
            Episode.status == EPISODE_DONE,
            EpisodeAgent.mu_after.is_not(None),
            EpisodeAgent.sigma_after.is_not(None),
        )
        .order_by(Episode.finished_at, Episode.id)
    ).all()
    points: list[RatingPoint] = []
    for episode_id, mu0, sigma0, mu, sigma in rows:
        if not points and mu0 is not None and sigma0 is not None:
            points.append(RatingPoint(0, None, mu0, sigma0))
        points.append(RatingPoint(len(points), episode_id, mu, sigma))
    return points
