"""The web app: server-rendered pages over the same services as the API."""

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.accounts.sso import providers as sso_providers
from app.web import (
    account,
    bundles,
    episodes,
    host,
    join,
    launch,
    my_account,
    notices,
    pages,
    participant,
    registration,
    sso,
    wizard,
    wizard_phases,
)
from app.web.docs import install_docs
from app.web.errors import install_error_pages


def install_web(app: FastAPI) -> None:
    # A refused PODIUM_OIDC_PROVIDERS stops the server at start (one line), not at a sign-in.
    sso_providers(app.state.settings)
    for module in (
        account,
        join,
        my_account,
        notices,
        pages,
        participant,
        registration,
        host,
        launch,
        wizard,
        wizard_phases,
        bundles,
        sso,
        episodes,
    ):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static")
    install_docs(app)
    install_error_pages(app)
