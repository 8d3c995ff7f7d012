"""A small synchronous client for Podium's REST API (httpx). Every failure becomes one
:class:`ClientError` whose message the CLI prints as is."""

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import httpx

API = "/api/v1"
Progress = Callable[[int], None]


class ClientError(Exception):
    pass


class _CountingReader:
    """A file whose reads report their size, so an upload can drive a progress bar."""

    def __init__(self, source: BinaryIO, progress: Progress) -> None:
        self._source = source
        self._progress = progress

    def read(self, size: int = -1) -> bytes:
        data = self._source.read(size)
        self._progress(len(data))
        return data

    def fileno(self) -> int:  # lets httpx send a Content-Length
        return self._source.fileno()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._source.seek(offset, whence)

    def tell(self) -> int:
        return self._source.tell()


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}: {response.text[:200]}"
    detail = body.get("detail") if isinstance(body, dict) else None
    if isinstance(detail, list):  # a validation error: name the fields
        detail = "; ".join(
            f"{'.'.join(str(p) for p in d.get('loc', []))}: {d.get('msg')}" for d in detail
        )
    return f"{detail or body} (HTTP {response.status_code})"


class PodiumClient:
    def __init__(self, url: str, token: str, *, timeout: float = 300.0) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.url + API,
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
        )

    def __enter__(self) -> "PodiumClient":
        return self

    def __exit__(self, *_: object) -> None:
        self._http.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach {self.url}: {exc}") from None
        if response.status_code >= 400:
            raise ClientError(_message(response))
        return response.json() if response.content else None

    def me(self) -> dict[str, Any]:
        return self._call("GET", "/me")  # type: ignore[no-any-return]

    def competitions(self) -> list[dict[str, Any]]:
        return self._call("GET", "/competitions")  # type: ignore[no-any-return]

    def files(self, slug: str) -> list[dict[str, Any]]:
        return self._call("GET", f"/competitions/{slug}/files")  # type: ignore[no-any-return]

    def download(self, slug: str, name: str, dest: Path, progress: Progress) -> int:
        """Stream one data file to ``dest`` (through a temporary name); returns its size."""
        part = dest.with_name(dest.name + ".part")
        size = 0
        try:
            with self._http.stream("GET", f"/competitions/{slug}/files/{name}") as response:
                if response.status_code >= 400:
                    response.read()
                    raise ClientError(_message(response))
                with part.open("wb") as out:
                    for chunk in response.iter_bytes(1 << 20):
                        out.write(chunk)
                        size += len(chunk)
                        progress(len(chunk))
            part.replace(dest)
        except httpx.HTTPError as exc:
            raise ClientError(f"download of {name} failed: {exc}") from None
        finally:
            part.unlink(missing_ok=True)
        return size

    def submit(self, slug: str, path: Path, description: str, progress: Progress) -> dict[str, Any]:
        with path.open("rb") as source:
            files = {"file": (path.name, _CountingReader(source, progress), "text/csv")}
            return self._call(  # type: ignore[no-any-return]
                "POST",
                f"/competitions/{slug}/submissions",
                files=files,
                data={"description": description},
            )

    def submission(self, submission_id: int) -> dict[str, Any]:
        return self._call("GET", f"/submissions/{submission_id}")  # type: ignore[no-any-return]

    def submissions(self, slug: str) -> list[dict[str, Any]]:
        return self._call("GET", f"/competitions/{slug}/submissions")  # type: ignore[no-any-return]

    def leaderboard(self, slug: str, board: str) -> dict[str, Any]:
        return self._call(  # type: ignore[no-any-return]
            "GET", f"/competitions/{slug}/leaderboard", params={"board": board}
        )

    def select(self, submission_id: int, selected: bool) -> dict[str, Any]:
        method = "POST" if selected else "DELETE"
        return self._call(method, f"/submissions/{submission_id}/select")  # type: ignore[no-any-return]
