"""Prometheus metrics of the service, in the process's default registry.

The API process serves them at ``/metrics``; a Celery worker serves its own on
``PODIUM_WORKER_METRICS_PORT`` (scoring happens there).
"""

from prometheus_client import Counter, Gauge, Histogram

REQUEST_SECONDS = Histogram(
    "podium_http_request_duration_seconds",
    "Time to answer a request, by route template.",
    ["method", "route", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
UPLOADS = Counter(
    "podium_uploads_total",
    "Submission uploads, by outcome (accepted or the refusal's status).",
    ["outcome"],
)
UPLOAD_BYTES = Histogram(
    "podium_upload_bytes",
    "Size of submission uploads as declared by the client.",
    buckets=(1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9),
)
QUEUE_DEPTH = Gauge(
    "podium_queue_depth", "Submissions waiting for or in scoring, read at scrape time.", ["status"]
)
SCORING_SECONDS = Histogram(
    "podium_scoring_duration_seconds",
    "Time to score one submission, by metric and file size.",
    ["metric", "size"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)
SCORING_FAILURES = Counter(
    "podium_scoring_failures_total",
    "Submissions that failed scoring, by kind (participant, answer_key, internal, timeout, "
    "attempts).",
    ["kind"],
)
SWEEP_ACTIONS = Counter(
    "podium_sweep_actions_total",
    "What the sweep did: requeued (never delivered), expired (lease lapsed), failed (out of "
    "attempts).",
    ["action"],
)


def size_class(n_bytes: int) -> str:
    """A coarse label for a file's size, so the scoring histogram stays a few series."""
    for limit, label in ((1 << 20, "<1MB"), (10 << 20, "1-10MB"), (100 << 20, "10-100MB")):
        if n_bytes < limit:
            return label
    return ">=100MB"
