"""Load figures for scale-out scoring: a real API process (uvicorn, Celery backend) on the
machine's PostgreSQL, a Redis of its own, and 1 or 2 ``podium worker`` processes.

For each count of small submissions (``--counts``), from ``--users`` participants uploading at
once (one thread each): accepted uploads per second at the API, upload p50/p99, and the time from
the first upload until every submission is scored, with 1 and with 2 workers. Then one 1M-row
binary submission from upload to ``scored``, with its scoring time (claim to outcome).

    PODIUM_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1/postgres \\
        python bench/bench_load.py
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.auth.service import create_user  # noqa: E402
from app.db import make_engine, make_session_factory, unit_of_work  # noqa: E402
from app.migrate import upgrade  # noqa: E402
from app.models import Role, Submission, SubmissionStatus  # noqa: E402

SECRET = "b" * 40
API = "/api/v1"
KEY = (
    b"id,target,Usage\na,1,Public\nb,0,Public\nc,1,Public\nd,0,Private\ne,1,Private\nf,0,Private\n"
)
SMALL = b"id,target\na,0.9\nb,0.1\nc,0.8\nd,0.2\ne,0.7\nf,0.3\n"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(check, what: str, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except Exception:  # noqa: BLE001, S110 - not up yet
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not start")
        time.sleep(0.1)


class Run:
    """One fresh database, Redis, API and workers."""

    def __init__(self, base_url: str, workdir: Path, workers: int, users: int) -> None:
        self.workdir = workdir
        name = f"podium_load_{uuid.uuid4().hex[:10]}"
        self.admin = create_engine(base_url, isolation_level="AUTOCOMMIT")
        with self.admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        self.db_name = name
        self.database_url = make_url(base_url).set(database=name).render_as_string(False)
        upgrade(self.database_url)
        self.factory = make_session_factory(make_engine(self.database_url))
        self.tokens = []
        with unit_of_work(self.factory) as session:
            self.host = create_user(session, name="host", role=Role.organiser, secret_key=SECRET)[1]
            for i in range(users):
                self.tokens.append(
                    create_user(session, name=f"u{i}", role=Role.participant, secret_key=SECRET)[1]
                )
        self.redis_port = _port()
        self.procs: list[subprocess.Popen[bytes]] = []
        self._spawn(
            ["redis-server", "--port", str(self.redis_port), "--save", "", "--appendonly", "no"]
        )
        import redis

        _wait(lambda: redis.Redis(port=self.redis_port).ping(), "redis")
        self.env = {
            **os.environ,
            "PODIUM_ENV": "test",
            "PODIUM_DATABASE_URL": self.database_url,
            "PODIUM_DATA_DIR": str(workdir / "data"),
            "PODIUM_SECRET_KEY": SECRET,
            "PODIUM_SCORING_BACKEND": "celery",
            "PODIUM_CELERY_BROKER_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "PODIUM_MAX_ROWS": "5000000",
            # The per-team upload rate limit guards a real server; here each user uploads as
            # fast as the API answers, which is the load being measured.
            "PODIUM_UPLOADS_PER_MINUTE": "1000000",
        }
        self.port = _port()
        self._spawn(
            [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app", "--port"]
            + [str(self.port), "--log-level", "warning"],
            env=self.env,
        )
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=120)
        _wait(lambda: self.client.get("/readyz").status_code == 200, "the API")
        for _ in range(workers):
            self._spawn(
                [sys.executable, "-m", "app.cli", "worker", "--loglevel", "WARNING"], self.env
            )

    def _spawn(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        log = open(self.workdir / f"proc-{len(self.procs)}.log", "wb")  # noqa: SIM115
        self.procs.append(
            subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        )

    def competition(self, key: bytes) -> None:
        headers = {"Authorization": f"Bearer {self.host}"}
        body = {
            "slug": "load",
            "title": "Load",
            "metric": {"name": "roc_auc"},
            "daily_submission_limit": 10_000,
        }
        assert (
            self.client.post(f"{API}/competitions", json=body, headers=headers).status_code == 201
        )
        response = self.client.put(
            f"{API}/competitions/load/answer-key",
            files={"file": ("key.csv", key, "text/csv")},
            headers=headers,
        )
        assert response.status_code == 201, response.text

    def upload(self, token: str, content: bytes) -> float:
        with httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=120) as client:
            started = time.perf_counter()
            response = client.post(
                f"{API}/competitions/load/submissions",
                files={"file": ("sub.csv", content, "text/csv")},
                headers={"Authorization": f"Bearer {token}"},
            )
            elapsed = time.perf_counter() - started
        assert response.status_code == 202, response.text
        return elapsed

    def wait_scored(self, total: int, timeout: float = 1800) -> None:
        deadline = time.monotonic() + timeout
        while True:
            with self.factory() as session:
                done = session.scalar(
                    select(func.count()).where(
                        Submission.status.in_([SubmissionStatus.scored, SubmissionStatus.failed])
                    )
                )
            if done >= total:
                return
            if time.monotonic() > deadline:
                raise SystemExit(f"only {done} of {total} settled")
            time.sleep(0.05)

    def close(self) -> None:
        self.client.close()
        for proc in reversed(self.procs):
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.factory.kw["bind"].dispose()
        with self.admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)'))
        self.admin.dispose()


def small(base_url: str, count: int, workers: int, users: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        run = Run(base_url, Path(tmp), workers, users)
        try:
            run.competition(KEY)
            tokens = [run.tokens[i % users] for i in range(count)]
            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=users) as pool:
                latencies = list(pool.map(lambda t: run.upload(t, SMALL), tokens))
            uploaded = time.perf_counter() - started
            run.wait_scored(count)
            scored = time.perf_counter() - started
        finally:
            run.close()
    latencies.sort()
    return {
        "count": count,
        "workers": workers,
        "accepted_per_s": count / uploaded,
        "upload_p50_ms": statistics.median(latencies) * 1000,
        "upload_p99_ms": latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] * 1000,
        "all_scored_s": scored,
    }


def big(base_url: str, rows: int) -> dict:
    rng = np.random.default_rng(3)
    ids = [f"r{i}" for i in range(rows)]
    target = rng.integers(0, 2, rows)
    usage = np.where(rng.random(rows) < 0.3, "Public", "Private")
    key = (
        "id,target,Usage\n"
        + "".join(f"{i},{t},{u}\n" for i, t, u in zip(ids, target, usage, strict=True))
    ).encode()
    order = rng.permutation(rows)
    sub = ("id,target\n" + "".join(f"{ids[j]},{rng.random():.6f}\n" for j in order)).encode()
    with tempfile.TemporaryDirectory() as tmp:
        run = Run(base_url, Path(tmp), 1, 1)
        try:
            run.competition(key)
            started = time.perf_counter()
            upload = run.upload(run.tokens[0], sub)
            run.wait_scored(1)
            total = time.perf_counter() - started
            with run.factory() as session:
                submission = session.scalar(select(Submission))
                scoring = (submission.finished_at - submission.started_at).total_seconds()
                status = submission.status
        finally:
            run.close()
    return {
        "rows": rows,
        "bytes": len(sub),
        "upload_s": upload,
        "upload_to_scored_s": total,
        "scoring_s": scoring,
        "status": str(status),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="50,200,1000")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--big-rows", type=int, default=1_000_000)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    base = os.environ.get("PODIUM_TEST_DATABASE_URL")
    if not base:
        raise SystemExit("PODIUM_TEST_DATABASE_URL must name a PostgreSQL server")
    results: dict = {"small": [], "big": None}
    for count in [int(c) for c in args.counts.split(",")]:
        for workers in [int(w) for w in args.workers.split(",")]:
            result = small(base, count, workers, args.users)
            results["small"].append(result)
            print(json.dumps(result), flush=True)
    if args.big_rows:
        results["big"] = big(base, args.big_rows)
        print(json.dumps(results["big"]), flush=True)
    print()
    print("| submissions | workers | accepted / s | upload p50 ms | upload p99 ms | all scored s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in results["small"]:
        print(
            f"| {r['count']:,} | {r['workers']} | {r['accepted_per_s']:.1f} | "
            f"{r['upload_p50_ms']:.0f} | {r['upload_p99_ms']:.0f} | {r['all_scored_s']:.1f} |"
        )
    if results["big"]:
        b = results["big"]
        print(
            f"\n{b['rows']:,}-row submission ({b['bytes'] / 1e6:.0f} MB): upload {b['upload_s']:.2f} s, "
            f"upload to {b['status']} {b['upload_to_scored_s']:.2f} s, scoring {b['scoring_s']:.2f} s"
        )
    if args.output:
        args.output.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
