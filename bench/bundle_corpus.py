"""Public bundles through Podium as a host would take them: each bundle of bench/corpus/bundles.yaml
imported, published with no edit, and its example submission scored (in the jail) and compared
with the value its platform gives, on SQLite or PostgreSQL. Prints one row a bundle (the table in
docs/bundles.md) and exits 1 if any bundle its platform accepts does not import and publish.

    python bench/bundle_corpus.py --root DIR [--database-url postgresql+psycopg://.../empty_db]

DIR holds each repository the manifest names as DIR/<owner>+<name>/ (a checkout or a
`git archive` of the commit named there). The bundles are other projects' files: they are read
from there, never copied into this repository.
"""

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastapi.testclient import TestClient  # noqa: E402

from app.auth.service import create_user  # noqa: E402
from app.client.bundle import zip_directory  # noqa: E402
from app.config import Settings  # noqa: E402
from app.db import make_engine, make_session_factory  # noqa: E402
from app.main import create_app  # noqa: E402
from app.migrate import upgrade  # noqa: E402
from app.models import Role  # noqa: E402

MANIFEST = Path(__file__).with_name("corpus") / "bundles.yaml"
API = "/api/v1"


def _bundle_bytes(path: Path) -> bytes:
    return zip_directory(path) if path.is_dir() else path.read_bytes()


def _score(
    client: TestClient, headers: dict[str, str], slug: str, phase: str, submission: Path
) -> dict[str, Any]:
    """The example submission, uploaded by the host as a baseline (it goes into any phase,
    whatever the dates), scored at once (the eager queue)."""
    response = client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": (submission.name, submission.read_bytes(), "application/octet-stream")},
        data={"phase": phase, "baseline": "true"},
        headers=headers,
    )
    if response.status_code not in (201, 202):
        return {"status": f"refused {response.status_code}", "error": response.json()["detail"]}
    got = client.get(f"{API}/submissions/{response.json()['id']}", headers=headers).json()
    return got  # type: ignore[no-any-return]


def _values(got: dict[str, Any]) -> dict[str, float]:
    out = {}
    for key, split in (got.get("scores") or {}).items():
        value = split.get("public") if split.get("public") is not None else split.get("private")
        if value is not None:
            out[key] = value
    return out


def _check(entry: dict[str, Any], got: dict[str, Any] | None) -> tuple[str, bool]:
    if got is None:
        return "", True
    status = got.get("status", "?")
    values = _values(got)
    shown = ", ".join(f"{k} {v:.4g}" for k, v in list(values.items())[:3])
    if "expect_failure" in entry:
        return f"failed as on its platform ({(got.get('error') or '')[:60]})", status == "failed"
    expect = entry.get("expect") or {}
    if expect:
        ok = status == "scored" and all(
            k in values and math.isclose(values[k], v, rel_tol=1e-6, abs_tol=1e-9)
            for k, v in expect.items()
        )
        return f"{status}: {shown} (platform: {expect})", ok
    if status != "scored":
        if "differs" in entry:
            return f"{status}: {entry['differs']}", True
        why = (got.get("host_error") or got.get("error") or "")[-300:].replace("\n", " ")
        return f"{status}: {why}", False
    return f"scored: {shown}", True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--database-url", default=None, help="an empty database (default: SQLite)")
    parser.add_argument("--only", default=None, help="only bundles whose path holds this")
    args = parser.parse_args()
    manifest = yaml.safe_load(MANIFEST.read_text())
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{tmp}/corpus.db"
        upgrade(url)
        factory = make_session_factory(make_engine(url))
        settings = Settings(env="test", database_url=url, data_dir=Path(tmp) / "data",
                            secret_key="corpus-secret-key", scoring_backend="eager",
                            bundle_max_bytes=64 << 20)  # fmt: skip
        with factory() as session:
            _, token = create_user(
                session, name="host", role=Role.organiser, secret_key=settings.secret_key
            )
            session.commit()
        headers = {"Authorization": f"Bearer {token}"}
        print("| # | bundle | imported | warnings | published | example submission |")
        print("|---|---|---|---|---|---|")
        with TestClient(create_app(settings, session_factory=factory)) as client:
            for n, entry in enumerate(manifest["bundles"], 1):
                if args.only and args.only not in entry["bundle"]:
                    continue
                repo = args.root / entry["repo"].replace("/", "+")
                path = repo / entry["bundle"]
                name = f"{entry['repo']} `{entry['bundle']}`"
                began = time.perf_counter()
                response = client.post(
                    f"{API}/competitions/import",
                    headers=headers,
                    files={"file": (path.name, _bundle_bytes(path), "application/zip")},
                    data={"slug": f"corpus-{n}"},
                )
                if response.status_code != 201:
                    failures += 1
                    detail = response.json().get("detail", "")[:120]
                    print(f"| {n} | {name} | **no** ({response.status_code}: {detail}) | | | |")
                    continue
                body = response.json()
                published = client.post(f"{API}/competitions/corpus-{n}/publish", headers=headers)
                ok = published.status_code == 200
                failures += not ok
                got = None
                if entry.get("submission"):
                    phase = body["phases"][entry.get("phase", 0)]["name"]
                    got = _score(client, headers, f"corpus-{n}", phase, repo / entry["submission"])
                outcome, matched = _check(entry, got)
                failures += not matched
                seconds = time.perf_counter() - began
                pub = "yes" if ok else f"**no**: {published.json().get('detail', '')[:100]}"
                print(
                    f"| {n} | {name} | yes ({body['metric']['name']}, {len(body['phases'])} "
                    f"phases) | {len(body['warnings'])} | {pub} | {outcome}"
                    f"{'' if matched else ' **MISMATCH**'} ({seconds:.1f} s) |",
                    flush=True,
                )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
