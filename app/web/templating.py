"""The Jinja2 environment and the one function that renders a page."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from app.accounts.sso import providers_for_pages
from app.web.markdown import render_markdown
from app.web.session import FLASH_COOKIE, csrf_token, read_flash, remember_new_nonce

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")


def _when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if value else "—"


def _until(value: datetime | None, now: datetime | None = None) -> str:
    """'3d 4h', '2h 5m', '40s': the server's rendering of a countdown the page script refreshes."""
    if value is None:
        return ""
    seconds = int((value - (now or datetime.now(UTC))).total_seconds())
    if seconds <= 0:
        return "now"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s" if minutes else f"{secs}s"


def _score(value: float | None, decimals: int | None = None) -> str:
    if value is None:
        return "—"
    if decimals is not None:
        return f"{value:.{decimals}f}"
    return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.4e}"


def _filesize(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB"):
        if value < 1024:
            return f"{size} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def _iso(value: datetime | None) -> str:
    return value.astimezone(UTC).isoformat() if value else ""


templates.env.filters["when"] = _when
templates.env.filters["until"] = _until
templates.env.filters["score"] = _score
templates.env.filters["iso"] = _iso
templates.env.filters["filesize"] = _filesize
templates.env.filters["markdown"] = render_markdown


def render(
    request: Request, name: str, context: dict[str, Any] | None = None, *, status_code: int = 200
) -> HTMLResponse:
    flash = read_flash(request)
    full = {
        "user": getattr(request.state, "viewer", None),
        "csrf_token": csrf_token(request),
        "flash": flash,
        "now": datetime.now(UTC),
        "signup_mode": request.app.state.settings.signup,
        "sso_providers": providers_for_pages(request.app.state.settings),
        **(context or {}),
    }
    response = templates.TemplateResponse(request, name, full, status_code=status_code)
    if request.cookies.get(FLASH_COOKIE):
        response.delete_cookie(FLASH_COOKIE, path="/")
    remember_new_nonce(request, response)
    response.headers["Cache-Control"] = "no-store"
    return response
