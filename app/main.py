"""The FastAPI application: routers, one error handler, and the scorer's lifecycle."""

import asyncio
import dataclasses
import functools
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import fastapi.routing
from fastapi import APIRouter, FastAPI
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker
from starlette.types import ASGIApp, Receive, Scope, Send

import app.leaderboard.standings  # noqa: F401  (its session events keep the standings true)
from app import __version__
from app.accounts.housekeeping import housekeeping
from app.accounts.limits import AccountLimits
from app.accounts.router import admin_router
from app.accounts.router import router as accounts_router
from app.audit.router import router as audit_router
from app.auth.router import router as auth_router
from app.auth.throttle import FailedAuthLimiter
from app.auth.token_reader import token_reader
from app.backup.schedule import BackupLoop
from app.coderun.router import reproductions as reproductions_router
from app.coderun.router import router as runtime_router
from app.competitions.router import router as competitions_router
from app.config import Settings, get_settings
from app.datafiles.router import router as datafiles_router
from app.db import database_concurrency, make_engine, make_session_factory
from app.dispatch.worker import EventsThread
from app.episodes.router import router as simulation_router
from app.errors import error_responses
from app.honest.analysis.router import router as stats_router
from app.http.board_gate import BoardGate
from app.http.body_gate import BodyGate
from app.http.error_handlers import install_error_handlers
from app.http.security_headers import SecurityHeaders
from app.http.upload_guard import UploadGuard
from app.jobs.queue import ScoringQueue, make_queue
from app.jobs.reproduce import Reproducer
from app.jobs.rescore import lost_rescores
from app.jobs.sweep import Sweeper, sweep
from app.kaggle.proxy import AbsoluteFormTargets
from app.kaggle.router import router as kaggle_router
from app.leaderboard.cache import RenderedBoards
from app.leaderboard.router import router as leaderboard_router
from app.ledger.router import router as ledger_router
from app.mail.sender import MailSender
from app.notifications.router import router as notifications_router
from app.ops import unavailable
from app.ops.logs import configure_logging
from app.ops.middleware import RequestTelemetry
from app.ops.router import router as ops_router
from app.registration.router import router as registration_router
from app.shared.counters import Counters, MemoryCounters
from app.shared.state import SharedState
from app.submissions.router import router as submissions_router
from app.teams.router import router as teams_router
from app.web import install_web
from app.web.form_gate import FormGate
from app.webhooks.router import router as webhooks_router

log = logging.getLogger(__name__)


_frozen = False


def _freeze_start_up_objects() -> None:
    """What start-up loaded (modules, mappers, routes) lives as long as the process: frozen, the
    collector stops walking it on every full pass (the whole-board CSV's p99 went from about 250 to
    140 ms in bench/bench_leaderboard.py). Once a process: a test run builds many apps, and what
    is frozen is never collected."""
    global _frozen
    if not _frozen:
        gc.collect()
        gc.freeze()
        _frozen = True


@functools.cache
def _api_router() -> APIRouter:
    """The API's routes, put together once per process: FastAPI works out each route's
    dependencies and response fields when a router is included, and an app made per test (or per
    worker) would otherwise pay for that again each time."""
    # Every API route needs a token (refused with 429 after too many wrong ones from an address),
    # validates its request and may fail unexpectedly.
    api = APIRouter(prefix="/api/v1", responses=error_responses(401, 422, 429, 500))
    for router in (
        auth_router,
        accounts_router,
        admin_router,
        competitions_router,
        submissions_router,
        leaderboard_router,
        teams_router,
        audit_router,
        datafiles_router,
        stats_router,
        kaggle_router,
        runtime_router,
        reproductions_router,
        simulation_router,
        registration_router,
        webhooks_router,
        notifications_router,
        ledger_router,
    ):
        api.include_router(router)
    return api


# FastAPI (0.165) works out an included router's routes (each parameter's pydantic field and
# validator) lazily, on the first request, and keeps them on the inclusion: a fresh app paid
# ~0.1-0.4 s of CPU for it on its first requests, which is most of what a test of a route costs.
_IncludedRouter: Any = getattr(fastapi.routing, "_IncludedRouter", None)
_shared_inclusions: dict[int, Any] = {}


# The app serving the current request (set around each app's whole stack, in create_app).
_serving: ContextVar[FastAPI | None] = ContextVar("podium_serving_app", default=None)


class _ServingAppOverrides:
    """The ``dependency_overrides`` of the app serving the current request. A shared inclusion
    serves every app of the process, so it cannot name one app as FastAPI's inclusions do; this
    stands in for each, and ``app.dependency_overrides`` works on shared routes as on any."""

    @property
    def dependency_overrides(self) -> dict[Any, Any]:
        app = _serving.get()
        return app.dependency_overrides if app is not None else {}


_OVERRIDES = _ServingAppOverrides()


def _share_inclusions(app: FastAPI) -> None:
    """Give the app the process's inclusion of each router it includes, so that the routes are
    worked out once per process, however many apps it builds (a test run builds one per test),
    and before its first request.
    A router is shared only when every app includes it the same way (prefix, tags, dependencies);
    its dependency overrides are those of the app serving the request (:class:`_ServingAppOverrides`).
    Where FastAPI changes its internals, every app simply keeps its own (tests/test_main.py
    notices)."""
    if _IncludedRouter is None:
        return
    routes = app.router.routes
    for index, route in enumerate(routes):
        if type(route) is not _IncludedRouter:
            continue
        context = dataclasses.replace(
            route.include_context, dependency_overrides_provider=_OVERRIDES
        )
        shared = _shared_inclusions.setdefault(
            id(route.original_router),
            _IncludedRouter(original_router=route.original_router, include_context=context),
        )
        if shared.include_context == context:
            routes[index] = shared
    app.router._mark_routes_changed()
    # Worked out now, with the app, rather than on the first request a server takes (which
    # paid ~0.1-0.4 s of CPU for it); once per process, as the inclusions are shared.
    for route in routes:
        if type(route) is _IncludedRouter:
            for _context in route.effective_route_contexts():
                pass


def _requeue_lost_rescores(factory: sessionmaker[Session], queue: ScoringQueue) -> None:
    """A benchmark's rescoring jobs live in the embedded queue's memory: those the last process
    took with it are queued again (a broker keeps Celery's)."""
    try:
        with factory() as session:
            lost = lost_rescores(session)
    except Exception:  # noqa: BLE001 - the database is away: POST …/rescore queues them later
        log.warning("could not look for lost benchmark rescores", exc_info=True)
        return
    for submission_id, key_id in lost:
        queue.enqueue(submission_id, key_id)
    if lost:
        log.info("queued %d benchmark rescoring job(s) lost with the last process", len(lost))


def create_app(
    settings: Settings | None = None,
    *,
    session_factory: sessionmaker[Session] | None = None,
    scoring_queue: ScoringQueue | None = None,
) -> FastAPI:
    settings = settings or get_settings()
    if settings.log_format == "json":
        configure_logging(settings.log_format, settings.log_level)
    if session_factory is None:
        session_factory = make_session_factory(make_engine(settings.database_url))
    queue = scoring_queue or make_queue(settings, session_factory)

    def enqueue_code(submission_id: int) -> None:
        queue.enqueue(submission_id, code=True)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.database_slots = asyncio.Semaphore(database_concurrency(session_factory))
        queue.start()
        # Whatever is queued, or held under a lapsed lease, is handed out again: at once for a
        # backend whose memory died with the last process, after the usual grace for a broker.
        embedded = settings.scoring_backend != "celery"
        try:
            sweep(
                session_factory,
                queue.enqueue,
                settings=settings,
                grace_seconds=0 if embedded else None,
                enqueue_code=enqueue_code,
                enqueue_episode=getattr(queue, "enqueue_episode", None),
            )
        except Exception:  # noqa: BLE001 - the database is away: the periodic sweep catches up
            log.warning("start-up sweep failed", exc_info=True)
        if embedded:
            _requeue_lost_rescores(session_factory, queue)
        _freeze_start_up_objects()
        # Not on a factory bound to one connection (a test's savepoints): a thread of its own
        # would share that connection with the requests.
        own_engine = isinstance(session_factory.kw.get("bind"), Engine)
        mail_sender = (
            MailSender(
                session_factory,
                settings,
                housekeeping=functools.partial(housekeeping, session_factory),
            )
            if settings.send_mail and own_engine
            else None
        )
        if mail_sender is not None:
            mail_sender.start()
        # The time sweep, notifications and webhook deliveries: one thread a process, safe
        # beside the others' (keyed events, readers' marks, delivery leases).
        events_thread = (
            EventsThread(session_factory, settings)
            if settings.process_events and own_engine
            else None
        )
        if events_thread is not None:
            events_thread.start()
        # The hosts' reproductions of the winners run code where the embedded backend does.
        reproducer = (
            Reproducer(session_factory, settings)
            if settings.scoring_backend != "celery" and own_engine
            else None
        )
        if reproducer is not None:
            reproducer.start()
        # Scheduled backups (PODIUM_BACKUP_TO): every process looks, one takes each (a lease).
        backups = (
            BackupLoop(session_factory, settings) if settings.backup_to and own_engine else None
        )
        if backups is not None:
            backups.start()
        sweeper = None
        if settings.scoring_backend == "thread":
            sweeper = Sweeper(
                session_factory,
                queue.enqueue,
                settings,
                enqueue_code,
                getattr(queue, "enqueue_episode", None),
            )
            sweeper.start()
        yield
        if backups is not None:
            backups.stop()
        if reproducer is not None:
            reproducer.stop()
        if sweeper is not None:
            sweeper.stop()
        if events_thread is not None:
            events_thread.stop()
        if mail_sender is not None:
            mail_sender.stop()
        queue.stop()
        app.state.shared_state.close()
        if app.state.token_reader is not None:
            await app.state.token_reader.close()

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
    app.state.session_factory = session_factory
    app.state.token_reader = token_reader(session_factory)
    app.state.scoring_queue = queue
    app.state.rendered_boards = RenderedBoards()
    app.state.shared_state = shared = SharedState(settings)

    def failure_counters(kind: str) -> Counters:
        # Each process's own table: the store on SQLite, the fallback while Redis is away.
        memory = MemoryCounters(
            window_seconds=settings.auth_failure_window_seconds,
            max_keys=settings.auth_failure_keys,
        )
        return shared.counters(
            kind, window_seconds=settings.auth_failure_window_seconds, memory=memory
        )

    app.state.account_limits = AccountLimits.make(settings, shared)
    app.state.auth_limiter = FailedAuthLimiter(
        max_failures=settings.auth_failures_per_window,
        window_seconds=settings.auth_failure_window_seconds,
        max_per_address=settings.auth_failures_per_address,
        max_per_account=settings.auth_failures_per_account,
        counters=failure_counters,
    )
    app.add_middleware(
        UploadGuard,
        settings=settings,
        session_factory=session_factory,
        limiter=app.state.auth_limiter,
        tokens=app.state.token_reader,
    )

    app.add_middleware(BoardGate, most=settings.board_concurrency)
    # Outside the board gate and the upload guard: a body is read within its bounds before a
    # board place, a database slot or a thread is taken for it; and before that, a web form
    # without its CSRF cookie or a live session is refused without reading its body.
    app.add_middleware(BodyGate, settings=settings)
    app.add_middleware(FormGate, settings=settings, session_factory=session_factory)

    install_error_handlers(app)

    unavailable.install(app)
    app.add_middleware(RequestTelemetry)
    # Outermost: the kaggle client's absolute-form targets (http://localhost/api/...) are made
    # origin-form before any gate classifies the path (the form gate took them for web forms).
    app.add_middleware(AbsoluteFormTargets)
    app.include_router(ops_router)

    app.include_router(_api_router())
    install_web(app)
    _share_inclusions(app)
    # Around the whole stack, Starlette's outermost error middleware included, so that even the
    # generic 500 carries the security headers.
    build_stack = app.build_middleware_stack
    app.build_middleware_stack = lambda: _Serving(app, SecurityHeaders(build_stack()))  # type: ignore[method-assign]
    return app


class _Serving:
    """Marks the app serving each request, for its dependency overrides on shared routes."""

    def __init__(self, app: FastAPI, inner: ASGIApp) -> None:
        self.app = app
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = _serving.set(self.app)
        try:
            await self.inner(scope, receive, send)
        finally:
            _serving.reset(token)
