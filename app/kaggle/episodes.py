"""The official client's simulation commands: ``competitions episodes``, ``replay``, ``logs``
and ``team-submissions`` (kagglesdk's ListSubmissionEpisodes, GetEpisodeReplay,
GetEpisodeAgentLogs, ListTeamPublicSubmissions), over the same rules as the JSON API
(:mod:`app.episodes.service`): replays are anyone's who sees the competition, logs their team's
and the hosts'."""

import json

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.hosts import is_host
from app.competitions.visibility import is_visible
from app.episodes import service as episodes
from app.errors import NotFound
from app.evaluation.rounding import rounded
from app.honest.board.board import hides_public_scores
from app.kaggle import schemas as k
from app.kaggle.service import Context, current_phase_name
from app.leaderboard.service import ladder_standings, leaderboard, standings
from app.models import AgentRating, Competition, Phase, Submission, Team, User
from app.simulation.settings import SimulationSettings

_SEAT_STATES = {
    "DONE": "EPISODE_AGENT_STATE_COMPLETE",
    "ERROR": "EPISODE_AGENT_STATE_ERROR_EVALUATION",
    "INVALID": "EPISODE_AGENT_STATE_ERROR_INVALID_ACTION",
    "TIMEOUT": "EPISODE_AGENT_STATE_ERROR_TIMEOUT",
}
_EPISODE_STATES = {"queued": "CREATED", "running": "CREATED", "done": "COMPLETED"}


def list_submission_episodes_call(
    session: Session, user: User, req: k.ListSubmissionEpisodesRequest, ctx: Context
) -> k.ListSubmissionEpisodesResponse:
    listed = episodes.submission_episodes(session, submission_id=req.submission_id, user=user)
    teams = {
        name: team_id
        for team_id, name in session.execute(
            select(Team.id, Team.name).where(
                Team.id.in_(
                    select(Submission.team_id).where(
                        Submission.id.in_({s.submission_id for e in listed for s in e.agents})
                    )
                )
            )
        )
    }
    return k.ListSubmissionEpisodesResponse(
        episodes=[
            k.ApiEpisode(
                id=e.id,
                create_time=e.created_at,
                end_time=e.finished_at,
                state=_EPISODE_STATES.get(e.status, "ERRORED"),
                type="EPISODE_TYPE_VALIDATION" if e.kind == "validation" else "EPISODE_TYPE_PUBLIC",
                agents=[
                    k.ApiEpisodeAgent(
                        submission_id=s.submission_id,
                        index=s.position,
                        reward=s.reward,
                        state=_SEAT_STATES.get(s.status or "", "EPISODE_AGENT_STATE_PENDING"),
                        team_name=s.team,
                        team_id=teams.get(s.team, 0),
                    )
                    for s in e.agents
                ],
            )
            for e in listed
        ]
    )


def episode_replay_call(
    session: Session, user: User, req: k.EpisodeRequest, ctx: Context
) -> tuple[str, bytes, str]:
    replay = episodes.replay(session, episode_id=req.episode_id, user=user)
    return f"episode-{req.episode_id}-replay.json", json.dumps(replay).encode(), "application/json"


def episode_agent_logs_call(
    session: Session, user: User, req: k.EpisodeAgentLogsRequest, ctx: Context
) -> tuple[str, bytes, str]:
    log = episodes.seat_log(session, episode_id=req.episode_id, position=req.agent_index, user=user)
    # Kaggle's agent log is the list of per-step {duration, stdout, stderr}.
    name = f"episode-{req.episode_id}-agent-{req.agent_index}-logs.json"
    return name, json.dumps(log.get("steps", [])).encode(), "application/json"


def list_team_public_submissions_call(
    session: Session, user: User, req: k.ListTeamPublicSubmissionsRequest, ctx: Context
) -> k.ListTeamPublicSubmissionsResponse:
    """A simulation phase's team: its active agents with their skill; in any other phase the
    one submission the team has on the public board, at the score the board shows the caller
    (its decimals, the Ladder's released score); the current phase's, as the client's other
    board commands read, under the board's own access rule (a blind or hidden board refuses)."""
    team = session.get(Team, req.team_id)
    competition = session.get(Competition, team.competition_id) if team is not None else None
    if team is None or competition is None or not is_visible(session, competition, user):
        raise NotFound(f"no team {req.team_id}")
    board = leaderboard(
        session,
        competition=competition,
        board="public",
        user=user,
        limit=1,
        phase_name=current_phase_name(competition),
    )
    phase = next(p for p in competition.phases if p.name == board.phase)
    if phase.takes_agents:
        return k.ListTeamPublicSubmissionsResponse(submissions=_agents(session, phase, team.id))
    key = phase.board_key
    if key is None:
        return k.ListTeamPublicSubmissionsResponse(submissions=[])
    ranked = standings(session, competition=competition, key_id=key.id, board="public")
    if hides_public_scores(competition, is_host(session, competition, user)):
        ranked = ladder_standings(session, competition=competition, key=key, ranked=ranked)
    return k.ListTeamPublicSubmissionsResponse(
        submissions=[
            k.ApiPublicSubmission(
                id=r.submission_id,
                date_submitted=r.submitted_at,
                public_score=repr(rounded(r.score, board.score_decimals)),
            )
            for r in ranked
            if r.team_id == team.id and not r.baseline
        ]
    )


def _agents(session: Session, phase: Phase, team_id: int) -> list[k.ApiPublicSubmission]:
    skill = SimulationSettings.model_validate(phase.simulation or {}).k
    rows = session.execute(
        select(AgentRating, Submission.created_at)
        .join(Submission, Submission.id == AgentRating.submission_id)
        .where(
            AgentRating.phase_id == phase.id,
            AgentRating.team_id == team_id,
            AgentRating.active.is_(True),
        )
        .order_by(AgentRating.submission_id.desc())
    ).all()
    return [
        k.ApiPublicSubmission(
            id=r.submission_id, date_submitted=at, public_score=repr(r.mu - skill * r.sigma)
        )
        for r, at in rows
    ]
