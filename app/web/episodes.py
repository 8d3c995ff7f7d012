"""An episode's page: its replay played by the environment's own renderer (kaggle-environments'
player and the environment's ``html_renderer``), with no script from anywhere else (the player's
libraries are served from ``/static/kaggle-player``). The agents' logs are not on it: they are
their teams' and the hosts'.

The player is one page of inline scripts; like the API explorer's pages it gets a policy that
allows exactly those scripts, by their hashes, and the replay's JSON is escaped so that nothing
in it can close the script it sits in."""

import json
import re
from importlib import resources
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.deps import IdPath, SessionDep
from app.episodes.service import AgentView, agent_view, replay
from app.errors import Conflict
from app.simulation.environments import BUILT_IN, EnvironmentConfig, make
from app.simulation.settings import SimulationSettings
from app.web.charts import rating_over_episodes
from app.web.competition import PageCompetition, tab_context
from app.web.docs import with_docs_policy
from app.web.session import WebUser
from app.web.templating import render

router = APIRouter(include_in_schema=False)

_VENDOR = {
    "https://unpkg.com/preact@10.0.1/dist/preact.umd.js": "/static/kaggle-player/preact.umd.js",
    "https://unpkg.com/preact@10.0.1/hooks/dist/hooks.umd.js": "/static/kaggle-player/hooks.umd.js",
    "https://unpkg.com/htm@2.2.1/dist/htm.umd.js": "/static/kaggle-player/htm.umd.js",
    "https://unpkg.com/styled-components@3.5.0-0/dist/styled-components.min.js": (
        "/static/kaggle-player/styled-components.min.js"
    ),
}
# The player's one style sheet from a CDN (Eric Meyer's reset): left out, the page draws alike.
_RESET = re.compile(r"<link[^>]*?reset\.css[^>]*?/>", re.DOTALL)


def _script_json(value: Any) -> str:
    """JSON that cannot end the <script> it is written into."""
    text = json.dumps(value)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def player_page(document: dict[str, Any]) -> str:
    """kaggle-environments' player for one replay, every script local."""
    env = make(EnvironmentConfig(name=str(document.get("name", ""))))
    renderer = env.html_renderer()
    if not isinstance(renderer, str):
        raise ValueError("this environment's renderer is a page of its own")
    window = {
        "debug": False,
        "playing": True,
        "step": 0,
        "controls": True,
        "environment": document,
        "logs": [],
    }
    player = (resources.files("kaggle_environments") / "static" / "player.html").read_text()
    for remote, local in _VENDOR.items():
        player = player.replace(remote, local)
    player = _RESET.sub("", player)
    value = (
        f"\nwindow.kaggle = {_script_json(window)};\n\n"
        f"window.kaggle.renderer = {renderer.strip()};\n\n"
    )
    return player.replace("/*window.kaggle*/", value)


@router.get("/episodes/{episode_id}", response_class=HTMLResponse)
def episode_page(episode_id: IdPath, session: SessionDep, user: WebUser) -> HTMLResponse:
    document = replay(session, episode_id=episode_id, user=user)
    if document.get("name") not in BUILT_IN:
        # A host's own renderer is their code: it would run on this site's pages, as the viewer.
        raise Conflict(
            f"episode {episode_id} is of a host's own environment, whose renderer this page does "
            f"not run; its replay is at /api/v1/episodes/{episode_id}"
        )
    return with_docs_policy(HTMLResponse(player_page(document)))


@router.get("/c/{slug}/agents/{submission_id}", response_class=HTMLResponse)
def agent_page(
    request: Request,
    competition: PageCompetition,
    submission_id: IdPath,
    session: SessionDep,
    user: WebUser,
) -> HTMLResponse:
    view = agent_view(session, competition=competition, submission_id=submission_id, user=user)
    context = tab_context(session, competition, user, "leaderboard")
    return render(request, "agent.html", {**context, **_agent_context(view)})


def _agent_context(view: AgentView) -> dict[str, Any]:
    phase = view.submission.phase
    k = SimulationSettings.model_validate(phase.simulation or {}).k
    points = [(p.n, p.mu, p.sigma) for p in view.history]
    return {
        "agent": view,
        "agent_phase": phase,
        "k": k,
        "conservative": view.rating.mu - k * view.rating.sigma,
        "chart": rating_over_episodes(points, k=k),
        # The replay page plays kaggle-environments' own renderers only (a host's is their code).
        "player": (phase.environment or {}).get("name") in BUILT_IN,
    }
