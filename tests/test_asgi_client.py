"""The suite's TestClient (tests.asgi_client) answers as Starlette's does: the same status,
headers, body, cookies and raised errors, with the app seeing the same ASGI conversation."""

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Route

from tests.asgi_client import TestClient

seen: list[dict] = []


async def echo(request: Request) -> JSONResponse:
    body = await request.body()
    response = JSONResponse(
        {"method": request.method, "body": body.decode(), "query": request.url.query,
         "cookie": request.cookies.get("c"), "path": request.url.path}
    )  # fmt: skip
    response.set_cookie("c", "set-by-app")
    return response


async def chunks(request: Request) -> StreamingResponse:
    async def parts():  # type: ignore[no-untyped-def]
        for part in (b"one,", b"two,", b"three"):
            yield part

    return StreamingResponse(parts(), media_type="text/plain")


class AfterResponse:
    """A bare ASGI app (Starlette's Route passes it the conversation as it is)."""

    async def __call__(self, scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        first = await receive()
        await PlainTextResponse("done")(scope, receive, send)
        seen.append({"first": first["type"], "then": (await receive())["type"]})


async def fails(request: Request) -> None:
    raise RuntimeError("the app failed")


app = Starlette(
    routes=[
        Route("/echo/{name}", echo, methods=["GET", "POST", "HEAD"]),
        Route("/chunks", chunks),
        Route("/after", AfterResponse()),
        Route("/fails", fails),
    ]
)


def test_body_query_path_and_cookies_go_both_ways():
    with TestClient(app) as client:
        answer = client.post("/echo/a%20b?x=1&y=2", content=b"payload")
        assert answer.status_code == 200
        assert answer.json() == {
            "method": "POST", "body": "payload", "query": "x=1&y=2", "cookie": None,
            "path": "/echo/a b",
        }  # fmt: skip
        assert client.get("/echo/again").json()["cookie"] == "set-by-app"


def test_a_streamed_response_arrives_whole_and_head_has_no_body():
    with TestClient(app) as client:
        assert client.get("/chunks").text == "one,two,three"
        head = client.head("/echo/x")
        assert head.status_code == 200 and head.content == b""
        assert int(head.headers["content-length"]) > 0


def test_the_app_hears_the_body_then_a_disconnect_once_the_response_is_complete():
    seen.clear()
    with TestClient(app) as client:
        assert client.get("/after").text == "done"
    assert seen == [{"first": "http.request", "then": "http.disconnect"}]


def test_an_app_error_is_raised_in_the_test_or_answered_500():
    with TestClient(app) as client, pytest.raises(RuntimeError, match="the app failed"):
        client.get("/fails")
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/fails").status_code == 500


def test_a_client_not_entered_still_answers():
    assert TestClient(app).get("/chunks").text == "one,two,three"
