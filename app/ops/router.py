"""``/healthz`` (the process answers), ``/readyz`` (what it needs is reachable), ``/metrics``."""

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.ops import readiness
from app.ops.telemetry import QUEUE_DEPTH

router = APIRouter(tags=["ops"])

RETRY_AFTER_SECONDS = 5
# `/metrics` is the web catalogue of metrics for a browser; a scraper asking for the Prometheus
# text formats is routed here by app.ops.middleware.
PROMETHEUS_PATH = "/metrics/prometheus"


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """Alive: answers without touching the database, so a slow database never fails it."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "a dependency is unreachable"}})
def readyz(request: Request) -> JSONResponse:
    state = request.app.state
    checks = readiness.check_all(state.settings, state.session_factory)
    ready = all(c == "ok" for c in checks.values())
    return JSONResponse(
        {"status": "ready" if ready else "unavailable", "checks": checks},
        status_code=200 if ready else 503,
        headers=None if ready else {"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


@router.get(PROMETHEUS_PATH, response_class=Response)
def metrics(request: Request) -> Response:
    try:
        depth = readiness.queue_depth(request.app.state.session_factory)
        for status in ("queued", "scoring"):
            QUEUE_DEPTH.labels(status).set(depth.get(status, 0))
    except Exception:  # noqa: BLE001 - metrics stay up while the database is down
        pass
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
