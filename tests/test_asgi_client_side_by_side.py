"""Side by side: tests.asgi_client.TestClient against Starlette's own TestClient, on the same
apps: each test runs its scenario through both clients and asserts they saw the same thing."""

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from fastapi.testclient import TestClient as StarletteTestClient
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import PlainTextResponse, StreamingResponse
from starlette.routing import Route

from tests.asgi_client import TestClient

CLIENTS = {"ours": TestClient, "starlette": StarletteTestClient}


def side_by_side(scenario: Callable[[type], Any]) -> Any:
    """The scenario's result through each client; they must agree."""
    results = {name: scenario(client) for name, client in CLIENTS.items()}
    assert results["ours"] == results["starlette"], results
    return results["ours"]


def make_app() -> tuple[Starlette, list[str]]:
    events: list[str] = []

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, str]]:
        events.append("startup")
        yield {"greeting": "from the lifespan"}
        events.append("shutdown")

    async def state(request: Request) -> PlainTextResponse:
        return PlainTextResponse(request.state.greeting)

    async def background(request: Request) -> PlainTextResponse:
        return PlainTextResponse("answered", background=BackgroundTask(events.append, "after"))

    async def chunks(request: Request) -> StreamingResponse:
        async def parts():  # type: ignore[no-untyped-def]
            for part in (b"one,", b"two,", b"three"):
                yield part

        return StreamingResponse(parts(), media_type="text/plain")

    async def breaks(request: Request) -> StreamingResponse:
        async def parts():  # type: ignore[no-untyped-def]
            yield b"first,"
            raise RuntimeError("broke mid-stream")

        return StreamingResponse(parts(), media_type="text/plain")

    app = Starlette(
        routes=[
            Route("/state", state),
            Route("/background", background),
            Route("/chunks", chunks),
            Route("/breaks", breaks),
        ],
        lifespan=lifespan,
    )
    return app, events


def test_the_lifespan_runs_on_enter_and_exit_and_its_state_reaches_requests():
    def scenario(client_class: type) -> Any:
        app, events = make_app()
        with client_class(app) as client:
            during = list(events)
            text = client.get("/state").text
        return during, text, events

    assert side_by_side(scenario) == (["startup"], "from the lifespan", ["startup", "shutdown"])


def test_a_background_task_has_run_when_the_request_returns():
    def scenario(client_class: type) -> Any:
        app, events = make_app()
        with client_class(app) as client:
            text = client.get("/background").text
            return text, list(events)

    assert side_by_side(scenario) == ("answered", ["startup", "after"])


def test_a_streamed_response_reads_the_same_whole_and_through_client_stream():
    def scenario(client_class: type) -> Any:
        app, _events = make_app()
        with client_class(app) as client:
            whole = client.get("/chunks")
            with client.stream("GET", "/chunks") as streamed:
                pieces = b"".join(streamed.iter_bytes())
            return whole.status_code, whole.headers["content-type"], whole.content, pieces

    assert side_by_side(scenario) == (
        200,
        "text/plain; charset=utf-8",
        b"one,two,three",
        b"one,two,three",
    )


@pytest.mark.parametrize(
    ("raise_server_exceptions", "expected"),
    [(True, ("raised", "broke mid-stream")), (False, ("answered", 200, b"first,"))],
)
def test_an_error_raised_mid_stream_is_raised_or_ends_the_body_where_it_broke(
    raise_server_exceptions, expected
):
    def scenario(client_class: type) -> Any:
        app, _events = make_app()
        with client_class(app, raise_server_exceptions=raise_server_exceptions) as client:
            try:
                response = client.get("/breaks")
            except RuntimeError as error:
                return "raised", str(error)
            return "answered", response.status_code, response.content

    assert side_by_side(scenario) == expected
