"""The suite's TestClient: Starlette's, with a transport that hands a request to the app in one
call into the client's event loop.

Starlette's own transport streams each response back through the event loop: about ten calls
from the test's thread into the loop's thread per request (two events, a memory stream, a cancel
scope, the task, then one call per body chunk), each a hand-over of the GIL between threads.
That came to about 2 ms of CPU a request, as much as the app's own work for a small one, over
the tens of thousands of requests the suite sends. No test streams a response (no
``client.stream``, and every response of the app ends), so this transport runs the app to its
end and returns the whole response, as a server that buffers would. What the app sees is the
same ASGI conversation: the request body in one message, then ``http.disconnect`` once the
response is complete."""

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any
from urllib.parse import unquote

import anyio
import anyio.from_thread
import httpx
from fastapi.testclient import TestClient as StarletteTestClient
from starlette.types import ASGIApp, Message

__all__ = ["TestClient"]

PortalFactory = Callable[[], AbstractContextManager[anyio.from_thread.BlockingPortal]]


class _Outcome:
    """What the app sent back, gathered in the event loop's thread."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.error: BaseException | None = None


class OneCallTransport(httpx.BaseTransport):
    def __init__(
        self,
        app: ASGIApp,
        portal_factory: PortalFactory,
        *,
        raise_server_exceptions: bool,
        root_path: str,
        client: tuple[str, int],
        app_state: dict[str, Any],
    ) -> None:
        self.app = app
        self.portal_factory = portal_factory
        self.raise_server_exceptions = raise_server_exceptions
        self.root_path = root_path
        self.client = client
        self.app_state = app_state

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise ValueError(f"this test client speaks HTTP only, not {url.scheme}")
        headers = [
            (key.lower().encode(), value.encode()) for key, value in request.headers.multi_items()
        ]
        if "host" not in request.headers:
            headers.insert(0, (b"host", url.netloc))
        scope = {
            "type": "http",
            "http_version": "1.1",
            "method": request.method,
            "path": unquote(url.path),
            "raw_path": url.raw_path.split(b"?", 1)[0],
            "root_path": self.root_path,
            "scheme": url.scheme,
            "query_string": url.query,
            "headers": headers,
            "client": self.client,
            "server": [url.host, url.port or (443 if url.scheme == "https" else 80)],
            "extensions": {"http.response.debug": {}},
            "state": self.app_state.copy(),
        }
        body = request.read()
        with self.portal_factory() as portal:
            outcome = portal.call(self._run, scope, body)
        if outcome.error is not None and self.raise_server_exceptions:
            raise outcome.error
        if outcome.status is None:
            if self.raise_server_exceptions:
                raise AssertionError("TestClient did not receive any response.")
            return httpx.Response(500, request=request)
        content = b"" if request.method == "HEAD" else b"".join(outcome.body)
        return httpx.Response(
            outcome.status,
            headers=[(key.decode(), value.decode()) for key, value in outcome.headers],
            content=content,
            request=request,
        )

    async def _run(self, scope: dict[str, Any], body: bytes) -> _Outcome:
        outcome = _Outcome()
        complete = anyio.Event()
        body_sent = False

        async def receive() -> Message:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await complete.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                assert outcome.status is None, 'Received multiple "http.response.start" messages.'
                outcome.status = message["status"]
                outcome.headers = list(message.get("headers", []))
            elif message["type"] == "http.response.body":
                assert outcome.status is not None, 'Received "http.response.body" first.'
                assert not complete.is_set(), 'Received "http.response.body" after the end.'
                outcome.body.append(bytes(message.get("body", b"")))
                if not message.get("more_body", False):
                    complete.set()

        try:
            await self.app(scope, receive, send)
        except Exception as error:  # handed to the test's thread, as Starlette's client does
            outcome.error = error
        finally:
            complete.set()
        return outcome


class TestClient(StarletteTestClient):
    """Starlette's TestClient (cookies, lifespan, redirects, ``portal``) with
    :class:`OneCallTransport` in place of its streaming transport."""

    __test__ = False

    def __init__(self, app: ASGIApp, *args: Any, **kwargs: Any) -> None:
        super().__init__(app, *args, **kwargs)
        inner = self._transport
        self._transport = OneCallTransport(
            self.app,
            self._portal_factory,
            raise_server_exceptions=inner.raise_server_exceptions,
            root_path=inner.root_path,
            client=inner.client,
            app_state=self.app_state,
        )
