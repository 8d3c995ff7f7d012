"""The FastAPI application: routers, one error handler, and the scorer's lifecycle."""

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from app import __version__
from app.audit.router import router as audit_router
from app.auth.router import router as auth_router
from app.competitions.router import router as competitions_router
from app.config import Settings, get_settings
from app.datafiles.router import router as datafiles_router
from app.db import database_concurrency, make_engine, make_session_factory
from app.errors import AppError
from app.kaggle.proxy import AbsoluteFormTargets
from app.kaggle.router import router as kaggle_router
from app.leaderboard.router import router as leaderboard_router
from app.scoring.jobs import pending_submissions
from app.scoring.queue import ScoringQueue, make_queue
from app.submissions.router import router as submissions_router
from app.teams.router import router as teams_router
from app.web import install_web

log = logging.getLogger(__name__)


def create_app(
    settings: Settings | None = None,
    *,
    session_factory: sessionmaker[Session] | None = None,
    scoring_queue: ScoringQueue | None = None,
) -> FastAPI:
    settings = settings or get_settings()
    if session_factory is None:
        session_factory = make_session_factory(make_engine(settings.database_url))
    queue = scoring_queue or make_queue(settings, session_factory)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.database_slots = asyncio.Semaphore(database_concurrency(session_factory))
        queue.start()
        # Whatever was queued, or orphaned mid-scoring by a crash, is picked up again.
        stale = timedelta(seconds=settings.stale_scoring_seconds)
        for submission_id in pending_submissions(session_factory, stale_after=stale):
            queue.enqueue(submission_id)
        yield
        queue.stop()

    app = FastAPI(
        title="Podium",
        version=__version__,
        description="Self-hosted evaluation service for machine-learning competitions.",
        lifespan=lifespan,
        # Served by app.web with their assets from an installed package: no CDN.
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.add_middleware(AbsoluteFormTargets)
    app.state.session_factory = session_factory
    app.state.scoring_queue = queue

    @app.exception_handler(AppError)
    async def app_error(_request: Request, exc: AppError) -> JSONResponse:
        return JSONResponse(
            status_code=exc.status_code,
            content={"detail": exc.detail, "code": exc.code, **exc.extra},
            headers={"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None,
        )

    @app.get("/healthz", tags=["ops"])
    def healthz() -> dict[str, str]:
        with session_factory() as session:
            session.execute(text("SELECT 1"))
        return {"status": "ok"}

    api = APIRouter(prefix="/api/v1")
    api.include_router(auth_router)
    api.include_router(competitions_router)
    api.include_router(submissions_router)
    api.include_router(leaderboard_router)
    api.include_router(teams_router)
    api.include_router(audit_router)
    api.include_router(datafiles_router)
    api.include_router(kaggle_router)
    app.include_router(api)
    install_web(app)
    return app
