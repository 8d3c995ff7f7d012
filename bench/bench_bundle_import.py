"""Issue 25 end to end: a catalogue-scored bundle with an N-row answer key per phase imported
through ``POST /api/v1/competitions/import``, exported by ``GET .../export`` and imported again,
in-process through the ASGI app (SQLite in a temporary directory). Prints seconds per step and
the bundle's size.

    python bench/bench_bundle_import.py [--rows 1000000]
"""

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastapi.testclient import TestClient  # noqa: E402

from app.auth.service import create_user  # noqa: E402
from app.bundles import BundleFile, export_codabench  # noqa: E402
from app.config import Settings  # noqa: E402
from app.db import make_engine, make_session_factory  # noqa: E402
from app.main import create_app  # noqa: E402
from app.migrate import upgrade  # noqa: E402
from app.models import Role  # noqa: E402
from tests.bundles.test_export import catalogue_competition  # noqa: E402


def key_csv(rows: int) -> bytes:
    rng = np.random.default_rng(0)
    usage = np.where(rng.random(rows) < 0.3, "Public", "Private")
    values = rng.normal(size=rows)
    lines = (f"{i},{v:.6f},{u}\n" for i, v, u in zip(range(rows), values, usage, strict=True))
    return ("id,target,Usage\n" + "".join(lines)).encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    key = key_csv(args.rows)
    base = catalogue_competition()
    phases = tuple(replace(p, answer_key=(BundleFile("key.csv", key),)) for p in base.phases)
    bundle = export_codabench(replace(base, phases=phases)).data
    print(
        f"{args.rows:,}-row key ({len(key) / 2**20:.1f} MiB) per phase, bundle {len(bundle) / 2**20:.1f} MiB"
    )
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bench.db"
        upgrade(url)
        factory = make_session_factory(make_engine(url))
        settings = Settings(env="test", database_url=url, data_dir=Path(tmp) / "data",
                            secret_key="bench-secret-key", scoring_backend="eager")  # fmt: skip
        with factory() as session:
            _, token = create_user(
                session, name="host", role=Role.organiser, secret_key=settings.secret_key
            )
            session.commit()
        headers = {"Authorization": f"Bearer {token}"}
        with TestClient(create_app(settings, session_factory=factory)) as client:

            def imported(data: bytes, slug: str, dry: bool = False) -> float:
                began = time.perf_counter()
                response = client.post("/api/v1/competitions/import", headers=headers,
                                       files={"file": ("b.zip", data, "application/zip")},
                                       data={"slug": slug, "dry_run": str(dry).lower()})  # fmt: skip
                assert response.status_code == 201, response.text
                return time.perf_counter() - began

            print(f"dry run            {imported(bundle, 'dry', True):6.2f} s")
            print(f"import             {imported(bundle, 'first'):6.2f} s")
            began = time.perf_counter()
            exported = client.get("/api/v1/competitions/first/export", headers=headers)
            assert exported.status_code == 200
            print(
                f"export             {time.perf_counter() - began:6.2f} s  ({len(exported.content) / 2**20:.1f} MiB)"
            )
            print(f"import the export  {imported(exported.content, 'second'):6.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
