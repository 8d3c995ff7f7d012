"""The web app: server-rendered pages over the same services as the API."""

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.web import (
    account,
    bundles,
    episodes,
    host,
    launch,
    pages,
    participant,
    wizard,
    wizard_phases,
)
from app.web.docs import install_docs
from app.web.errors import install_error_pages


def install_web(app: FastAPI) -> None:
    for module in (
        account,
        pages,
        participant,
        host,
        launch,
        wizard,
        wizard_phases,
        bundles,
        episodes,
    ):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static")
    install_docs(app)
    install_error_pages(app)
