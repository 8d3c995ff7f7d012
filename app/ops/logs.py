"""Structured logs with a request id.

Every request gets an id (the caller's ``X-Request-ID`` when it is a sane token, else a fresh
one), returned in the response and kept on a submission, so the scoring job's log lines carry the
id of the upload that caused them. ``PODIUM_LOG_FORMAT=json`` writes one JSON object a line.
"""

import json
import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime

_request_id: ContextVar[str | None] = ContextVar("podium_request_id", default=None)
_SANE = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,64}$")


def current_request_id() -> str | None:
    return _request_id.get()


def request_id_from(header: str | None) -> str:
    """The caller's id when it is a short token of safe characters, else a new one."""
    if header and _SANE.match(header):
        return header
    return uuid.uuid4().hex


@contextmanager
def request_id_context(value: str | None) -> Iterator[None]:
    token = _request_id.set(value)
    try:
        yield
    finally:
        _request_id.reset(token)


class RequestIdFilter(logging.Filter):
    """Puts the current request id on every record (``%(request_id)s`` in text formats)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _request_id.get()
        return True


def _stamp_request_ids() -> None:
    """Every log record carries the request id current where it was made, whatever handler
    (or test capture) formats it later."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "_podium", False):
        return

    def factory(*args, **kwargs):  # type: ignore[no-untyped-def]
        record = previous(*args, **kwargs)
        record.request_id = _request_id.get()
        return record

    factory._podium = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


_stamp_request_ids()

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "request_id",
}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or _request_id.get(),
        }
        entry.update(
            {k: v for k, v in record.__dict__.items() if k not in _STANDARD and k not in entry}
        )
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


_INSTALLED = "_podium_handler"


def configure_logging(log_format: str, level: str = "INFO") -> None:
    """Install one handler on the root logger (once): JSON lines or plain text with the id."""
    root = logging.getLogger()
    if any(getattr(h, _INSTALLED, False) for h in root.handlers):
        return
    handler = logging.StreamHandler()
    setattr(handler, _INSTALLED, True)
    handler.addFilter(RequestIdFilter())
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
        )
    root.addHandler(handler)
    root.setLevel(level.upper())
