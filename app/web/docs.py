"""/docs and /redoc served with Swagger UI and ReDoc from the installed ``fastapi-offline``
package (Swagger UI 5.32.6, Apache-2.0; ReDoc 2.5.3, MIT; the package itself MIT), so the API
explorer works on a machine without internet.

Both need a looser Content-Security-Policy than the site's pages: Swagger UI starts from an inline
script (allowed by its hash, nothing else inline), and both inject their styles at run time;
ReDoc's search runs in a worker made from a blob."""

import base64
import hashlib
import re
from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from app.http.security_headers import csp

ASSETS = Path(fastapi_offline.__file__).parent / "static"
ASSETS_URL = "/static-docs"
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def with_docs_policy(page: HTMLResponse) -> HTMLResponse:
    """The page with a policy that allows exactly its own inline scripts, by their hashes."""
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(body).digest()).decode()}'"
        for body in _INLINE_SCRIPT.findall(bytes(page.body))
    )
    page.headers["Content-Security-Policy"] = csp(
        default_src="'self'",
        script_src=f"'self' {hashes}".strip(),
        style_src="'self' 'unsafe-inline'",
        img_src="'self' data:",
        connect_src="'self'",
        font_src="'self' data:",
        worker_src="'self' blob:",
        object_src="'none'",
        base_uri="'none'",
        form_action="'self'",
        frame_ancestors="'none'",
    )
    return page


def install_docs(app: FastAPI) -> None:
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} API",
            oauth2_redirect_url=f"{root}/docs/oauth2-redirect",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None},
        )
        return with_docs_policy(page)

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    def swagger_redirect() -> HTMLResponse:
        return with_docs_policy(get_swagger_ui_oauth2_redirect_html())

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_redoc_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} API",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
        return with_docs_policy(page)
