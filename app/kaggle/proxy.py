"""Requests in proxy form. A client whose ``HTTP_PROXY`` names this server (how the official
kaggle client, which only knows ``http://localhost``, reaches a Podium elsewhere) sends
``POST http://localhost/api/...``; uvicorn's h11 parser keeps that whole target as the path."""

from starlette.types import ASGIApp, Receive, Scope, Send


def _origin_form(target: str) -> str:
    rest = target.split("://", 1)[1]
    slash = rest.find("/")
    return rest[slash:] if slash >= 0 else "/"


class AbsoluteFormTargets:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(("http://", "https://")):
            raw = scope.get("raw_path") or scope["path"].encode()
            scope = {
                **scope,
                "path": _origin_form(scope["path"]),
                "raw_path": _origin_form(raw.decode("latin-1")).encode("latin-1"),
            }
        await self.app(scope, receive, send)
