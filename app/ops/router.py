"""``/healthz`` (the process answers), ``/readyz`` (what it needs is reachable), ``/metrics``."""

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.errors import error_responses
from app.ops import readiness
from app.ops.telemetry import QUEUE_DEPTH

router = APIRouter(tags=["ops"])

RETRY_AFTER_SECONDS = 5
# `/metrics` is the web catalogue of metrics for a browser; a scraper asking for the Prometheus
# text formats is routed here by app.ops.middleware.
PROMETHEUS_PATH = "/metrics/prometheus"


@router.get("/healthz", responses=error_responses(500))
def healthz() -> dict[str, str]:
    """Alive: answers without touching the database, so a slow database never fails it."""
    return {"status": "ok"}


@router.get("/readyz", responses=error_responses(500, 503))
def readyz(request: Request) -> JSONResponse:
    """``ready``; ``degraded`` (200: the process serves, but its limits are its own while Redis
    is away); or ``unavailable`` (503: the database, storage or broker does not answer)."""
    state = request.app.state
    checks = readiness.check_all(state.settings, state.session_factory)
    shared = state.shared_state.check()
    needed = dict(checks)
    if shared is not None:
        checks["shared_state"] = shared
    ready = all(c == "ok" for c in needed.values())
    failing = ", ".join(f"{name}: {state}" for name, state in checks.items() if state != "ok")
    body: dict[str, object] = {"status": "ready" if ready else "unavailable", "checks": checks}
    if ready and failing:
        body = {
            "status": "degraded",
            "detail": f"degraded: {failing}; sign-in limits are counted per process",
            "checks": checks,
        }
    if not ready:  # the one error body, with the checks beside it
        body = {"detail": f"not ready: {failing}", "code": "unavailable", **body}
    return JSONResponse(
        body,
        status_code=200 if ready else 503,
        headers=None if ready else {"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


@router.get(PROMETHEUS_PATH, response_class=Response, responses=error_responses(500))
def metrics(request: Request) -> Response:
    try:
        depth = readiness.queue_depth(request.app.state.session_factory)
        for status in ("queued", "running", "scoring"):
            QUEUE_DEPTH.labels(status).set(depth.get(status, 0))
    except Exception:  # noqa: BLE001 - metrics stay up while the database is down
        pass
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
