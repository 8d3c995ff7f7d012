"""A small synchronous client for Podium's REST API (httpx). Every failure becomes one
:class:`ClientError` whose message the CLI prints as is."""

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import httpx

API = "/api/v1"
Progress = Callable[[int], None]


class ClientError(Exception):
    """A failed call; ``body`` is the server's error body when it sent one."""

    def __init__(self, message: str, *, body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.body = body or {}


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


def _body(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _chunks(path: Path, progress: Progress, size: int = 1 << 20) -> Iterator[bytes]:
    """A file's bytes a chunk at a time: a large upload is streamed, never held in memory."""
    with path.open("rb") as source:
        while chunk := source.read(size):
            progress(len(chunk))
            yield chunk


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
            raise ClientError(_message(response), body=_body(response))
        return response.json() if response.content else None

    def me(self) -> dict[str, Any]:
        return self._call("GET", "/me")  # type: ignore[no-any-return]

    def competitions(self) -> list[dict[str, Any]]:
        return self._call("GET", "/competitions")  # type: ignore[no-any-return]

    def files(self, slug: str) -> list[dict[str, Any]]:
        return self._call("GET", f"/competitions/{slug}/files")  # type: ignore[no-any-return]

    def download(self, slug: str, name: str, dest: Path, progress: Progress) -> int:
        """Stream one data file to ``dest`` (through a temporary name); returns its size."""
        return self._stream_to(
            f"/competitions/{slug}/files/{name}", dest, progress, what=f"download of {name}"
        )

    def _stream_to(
        self,
        path: str,
        dest: Path,
        progress: Progress,
        *,
        what: str,
        params: dict[str, str] | None = None,
    ) -> int:
        """GET ``path`` streamed into ``dest`` through a ``.part`` file that only a complete
        answer replaces it with; returns the size."""
        part = dest.with_name(dest.name + ".part")
        size = 0
        try:
            with self._http.stream("GET", path, params=params) as response:
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
            raise ClientError(f"{what} failed: {exc}") from None
        finally:
            part.unlink(missing_ok=True)
        return size

    def submit(
        self,
        slug: str,
        path: Path,
        description: str,
        progress: Progress,
        *,
        phase: str | None = None,
        details: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        data = {"description": description}
        if phase:
            data["phase"] = phase
        if details:
            data["details"] = json.dumps(details)
        with path.open("rb") as source:
            files = {"file": (path.name, _CountingReader(source, progress), "text/csv")}
            return self._call(  # type: ignore[no-any-return]
                "POST", f"/competitions/{slug}/submissions", files=files, data=data
            )

    def submission(self, submission_id: int) -> dict[str, Any]:
        return self._call("GET", f"/submissions/{submission_id}")  # type: ignore[no-any-return]

    def submissions(self, slug: str, phase: str | None = None) -> list[dict[str, Any]]:
        params = {"phase": phase} if phase else None
        return self._call(  # type: ignore[no-any-return]
            "GET", f"/competitions/{slug}/submissions", params=params
        )

    def submission_log(self, submission_id: int) -> dict[str, Any]:
        return self._call("GET", f"/submissions/{submission_id}/log")  # type: ignore[no-any-return]

    def leaderboard(self, slug: str, board: str, phase: str | None = None) -> dict[str, Any]:
        params = {"board": board, **({"phase": phase} if phase else {})}
        return self._call(  # type: ignore[no-any-return]
            "GET", f"/competitions/{slug}/leaderboard", params=params
        )

    def select(self, submission_id: int, selected: bool) -> dict[str, Any]:
        method = "POST" if selected else "DELETE"
        return self._call(method, f"/submissions/{submission_id}/select")  # type: ignore[no-any-return]

    # --- host calls (app.client.host) ---------------------------------------------------------

    def competition(self, slug: str) -> dict[str, Any]:
        return self._call("GET", f"/competitions/{slug}")  # type: ignore[no-any-return]

    def create_competition(self, body: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        params = {"dry_run": "true"} if dry_run else None
        return self._call(  # type: ignore[no-any-return]
            "POST", "/competitions", json=body, params=params
        )

    def upload_key(
        self, slug: str, path: Path, progress: Progress, phase: str | None = None
    ) -> dict[str, Any]:
        # Without a phase, the legacy route: the server names the phases when there are several.
        route = f"phases/{phase}/answer-key" if phase else "answer-key"
        with path.open("rb") as source:
            files = {"file": (path.name, _CountingReader(source, progress), "text/csv")}
            return self._call(  # type: ignore[no-any-return]
                "PUT", f"/competitions/{slug}/{route}", files=files
            )

    def upload_metric(self, slug: str, path: Path, direction: str) -> dict[str, Any]:
        with path.open("rb") as source:
            return self._call(  # type: ignore[no-any-return]
                "PUT",
                f"/competitions/{slug}/custom-metric",
                files={"file": (path.name, source, "text/x-python")},
                data={"direction": direction},
            )

    def hosts(self, slug: str) -> list[dict[str, Any]]:
        return self._call("GET", f"/competitions/{slug}/hosts")  # type: ignore[no-any-return]

    def add_host(self, slug: str, user: str) -> dict[str, Any]:
        return self._call(  # type: ignore[no-any-return]
            "POST", f"/competitions/{slug}/hosts", json={"user": user}
        )

    def remove_host(self, slug: str, user: str) -> None:
        self._call("DELETE", f"/competitions/{slug}/hosts/{user}")

    def update_competition(self, slug: str, changes: dict[str, Any]) -> dict[str, Any]:
        return self._call("PATCH", f"/competitions/{slug}", json=changes)  # type: ignore[no-any-return]

    def update_phase(self, slug: str, phase: str, changes: dict[str, Any]) -> dict[str, Any]:
        return self._call(  # type: ignore[no-any-return]
            "PATCH", f"/competitions/{slug}/phases/{phase}", json=changes
        )

    def change_release(self, slug: str, name: str, changes: dict[str, Any]) -> dict[str, Any]:
        return self._call(  # type: ignore[no-any-return]
            "PATCH", f"/competitions/{slug}/files/{name}", json=changes
        )

    def upload_file(
        self, slug: str, path: Path, progress: Progress, release: dict[str, str] | None = None
    ) -> dict[str, Any]:
        return self._call(  # type: ignore[no-any-return]
            "PUT",
            f"/competitions/{slug}/files/{path.name}",
            params=release or None,
            content=_chunks(path, progress),
            headers={
                "Content-Type": "application/octet-stream",
                "Content-Length": str(path.stat().st_size),
            },
        )

    def checklist(self, slug: str) -> dict[str, Any]:
        return self._call("GET", f"/competitions/{slug}/checklist")  # type: ignore[no-any-return]

    def publish(self, slug: str) -> dict[str, Any]:
        return self._call("POST", f"/competitions/{slug}/publish")  # type: ignore[no-any-return]

    def archive(self, slug: str) -> dict[str, Any]:
        return self._call("POST", f"/competitions/{slug}/archive")  # type: ignore[no-any-return]

    def delete_competition(self, slug: str) -> None:
        self._call("DELETE", f"/competitions/{slug}")

    def reproduce(self, slug: str, *, phase: str | None, top: int) -> dict[str, Any]:
        body = {"top": top, **({"phase": phase} if phase else {})}
        return self._call("POST", f"/competitions/{slug}/reproductions", json=body)  # type: ignore[no-any-return]

    def reproduction(self, slug: str, request: int | None = None) -> dict[str, Any]:
        params = {"request": request} if request is not None else {}
        return self._call("GET", f"/competitions/{slug}/reproductions", params=params)  # type: ignore[no-any-return]

    # --- bundles (app.client.bundle) --------------------------------------------------------

    def import_bundle(
        self, name: str, data: bytes, form: dict[str, str], progress: Progress
    ) -> dict[str, Any]:
        progress(len(data))
        return self._call(  # type: ignore[no-any-return]
            "POST",
            "/competitions/import",
            files={"file": (name, data, "application/zip")},
            data=form,
        )

    def export_bundle(
        self, slug: str, dest: Path, with_submissions: bool, progress: Progress
    ) -> int:
        """Stream the bundle to ``dest`` (through a temporary name); returns its size."""
        return self._stream_to(
            f"/competitions/{slug}/export",
            dest,
            progress,
            what=f"export of {slug}",
            params={"with_submissions": "true" if with_submissions else "false"},
        )
