"""Reading episodes: an agent's episodes, an episode's replay, a seat's log.

Replays are anyone's who may see the competition (Kaggle shows every episode); a seat's log is
its team's and the hosts' only, and anyone else is told it does not exist. A submission's
episodes are public once it entered the ladder; before that (its validation) its team's and the
hosts' only, as the submission itself is.
"""

import gzip
import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from app.auth.hosts import is_host
from app.competitions.visibility import is_visible
from app.episodes.schemas import EpisodePublic, SeatPublic
from app.errors import NotFound
from app.models import AgentRating, Episode, EpisodeAgent, Submission, Team, User
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
    return [_public(e, teams) for e in episodes]


def _team_names(session: Session, episodes: list[Episode]) -> dict[int, str]:
    ids = {seat.team_id for e in episodes for seat in e.agents}
    if not ids:
        return {}
    return dict(session.execute(select(Team.id, Team.name).where(Team.id.in_(ids))).all())


def _public(episode: Episode, teams: dict[int, str]) -> EpisodePublic:
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
                mu_before=seat.mu_before,
                sigma_before=seat.sigma_before,
                mu_after=seat.mu_after,
                sigma_after=seat.sigma_after,
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
