"""The upload path against its floor: Podium's API beside a bare FastAPI endpoint that reads the
same multipart file and inserts one row into PostgreSQL, with the same clients, at 1, 2 and 4
processes, in one run (issue 23).

For each process count it starts a server (uvicorn ``--workers N``) on a throw-away database on
the PostgreSQL in ``PODIUM_TEST_DATABASE_URL``, then ``--clients`` clients (asyncio, one
connection each, every client a user of its own, so no team's rate limit bites) send ``--uploads``
uploads of a ``--rows``-row CSV as fast as they are answered. Podium scores in its own processes
(the embedded scoring thread, score intervals on: the default) and the run ends when every
submission is scored, so the server CPU per upload counts the scoring too. Printed per row:
uploads/s (accepted, first request to last answer), latency p50 / p99 (ms, at the client), the
servers' CPU per upload (ms: user + system of every server process, read from /proc), and for
Podium the ratios to the floor at the same process count.

``--previous DIR`` runs a second Podium from another checkout (e.g. ``git worktree add
/tmp/podium-main main``) in the same run, for the design before; ``--redis URL`` gives Podium
``PODIUM_REDIS_URL`` (the shared limits).

``--in-process`` (issue 43) measures the record's own cost without a server: one client in this
process, blocks of ``--clients`` uploads with the record on and off in turn, each block then
scored as one batch; the medians of the blocks' CPU and wall per upload and per score, and
their ratios (the noise of a shared machine hits both alike, block by block).

``--record on,off`` (issue 43) runs this checkout twice side by side: with the record (every
upload's and every score's entry in the competition's hash chain, and the upload's signed
receipt), and with it switched off in the server processes (no entry built, none written, no
receipt), and prints the uploads/s ratio of on to off (the contract: within 10 %). On
PostgreSQL every append of a competition takes its chain head's row lock until its commit, so
the appends of one competition serialise; a sampler counts, every 20 ms, the server's backends
waiting on a lock (``pg_locks`` not granted) and prints the mean and the share of samples with
any waiter.

    PODIUM_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1/postgres \\
        python bench/bench_upload.py --redis redis://127.0.0.1:6379/10
    # the record's cost, briefly:
    python bench/bench_upload.py --processes 1,4 --clients 20 --uploads 300 --record on,off
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.auth.service import create_user  # noqa: E402
from app.db import make_engine, make_session_factory, unit_of_work  # noqa: E402
from app.migrate import upgrade  # noqa: E402
from app.models import Role, Submission, SubmissionStatus  # noqa: E402
from tests.live_server import free_port  # noqa: E402

SECRET = "u" * 40
API = "/api/v1"

# The floor: read the multipart file, insert one row, answer. Written to a file so uvicorn's
# workers can import it.
BARE_APP = """
import os

from fastapi import FastAPI, File, UploadFile
from sqlalchemy import create_engine, text

# A pool as large as a process's share of the clients: with 10 (and 10 more overflowing), each
# burst past it opened and closed connections of its own (210 in a 1000-upload run), work
# that made the floor look costlier than it is.
engine = create_engine(
    os.environ["BARE_DATABASE_URL"], pool_size=int(os.environ["BARE_POOL_SIZE"]), max_overflow=10
)
app = FastAPI()


@app.post("/upload", status_code=202)
def upload(file: UploadFile = File(...)) -> dict[str, int]:
    body = file.file.read()
    with engine.begin() as connection:
        new = connection.execute(
            text("INSERT INTO bare_uploads (name, size) VALUES (:n, :s) RETURNING id"),
            {"n": file.filename, "s": len(body)},
        ).scalar_one()
    return {"id": new}
"""

# The record switched off (``--record off``): the app's factory with the fact helpers made
# no-ops and the commit hook that writes the entries removed, so an upload builds no entry,
# writes none and signs no receipt, as before issue 43; the scoring thread runs in the same
# processes and appends nothing either.
RECORD_OFF_APP = """
from sqlalchemy import event
from sqlalchemy.orm import Session

from app.ledger import facts, record
from app.main import create_app as podium_app


def create_app():
    # Every fact goes through facts.append: none is built (no JSON, no seal), none written.
    facts.append = lambda *_args, **_kwargs: None
    if event.contains(Session, "before_commit", record._write_appended):
        event.remove(Session, "before_commit", record._write_appended)
    return podium_app()
"""


@dataclass
class Result:
    label: str
    processes: int
    accepted: int
    seconds: float
    p50_ms: float
    p99_ms: float
    cpu_ms: float
    switches: float  # context switches of the server's threads per upload
    # PostgreSQL backends of the run's database waiting on a lock: mean per sample, and the
    # share of samples with at least one (None: not sampled).
    waiting: tuple[float, float] | None = None

    @property
    def rate(self) -> float:
        return self.accepted / self.seconds


def _files(rows: int) -> tuple[bytes, bytes]:
    ids = [f"r{i}" for i in range(rows)]
    usage = ["Public" if i % 2 else "Private" for i in range(rows)]
    key = "id,target,Usage\n" + "".join(
        f"{k},{(i // 2) % 2},{u}\n" for i, (k, u) in enumerate(zip(ids, usage, strict=True))
    )
    sub = "id,target\n" + "".join(f"{k},{(i * 37 % 100) / 100}\n" for i, k in enumerate(ids))
    return key.encode(), sub.encode()


def _throwaway(base: str) -> str:
    name = f"podium_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(base).set(database=name).render_as_string(hide_password=False)


def _drop(base: str, url: str) -> None:
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        name = make_url(url).database
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _cpu_seconds(process: psutil.Process) -> float:
    total = 0.0
    for each in [process, *process.children(recursive=True)]:
        try:
            times = each.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def _switches(process: psutil.Process) -> int:
    """Context switches of every thread of the server's processes. A thread handing the GIL
    to another costs a pair of them: this counts what the CPU figure hides in the kernel."""
    total = 0
    for each in [process, *process.children(recursive=True)]:
        for task in Path(f"/proc/{each.pid}/task").glob("*"):
            try:
                status = (task / "status").read_text()
            except OSError:
                continue  # the thread ended
            for line in status.splitlines():
                if "ctxt_switches:" in line:  # voluntary and nonvoluntary
                    total += int(line.split()[1])
    return total


def _start(
    command: list[str], env: dict[str, str], port: int, log: Path, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    # ``cwd``: ``python -m`` puts the working directory first on sys.path, before PYTHONPATH, so
    # a server started from this checkout imported this checkout's app whatever PYTHONPATH said.
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server did not start:\n{log.read_text()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code in (200, 404):
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit("the server did not answer")


async def _drive(
    url: str, tokens: list[str], uploads: int, body: bytes
) -> tuple[int, float, list[float]]:
    left = uploads
    latencies: list[float] = []
    accepted = 0

    async def client(token: str) -> None:
        nonlocal left, accepted
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(headers=headers, timeout=120) as http:
            while left > 0:
                left -= 1
                start = time.perf_counter()
                answer = await http.post(url, files={"file": ("sub.csv", body, "text/csv")})
                latencies.append(time.perf_counter() - start)
                if answer.status_code == 202:
                    accepted += 1
                else:
                    print(f"  {answer.status_code}: {answer.text[:200]}", file=sys.stderr)

    start = time.perf_counter()
    await asyncio.gather(*(client(token) for token in tokens))
    return accepted, time.perf_counter() - start, latencies


def _summary(
    label: str,
    processes: int,
    accepted: int,
    seconds: float,
    latencies: list[float],
    cpu: float,
    switches: int,
) -> Result:
    ordered = sorted(latencies)
    return Result(
        label,
        processes,
        accepted,
        seconds,
        statistics.median(ordered) * 1000,
        ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
        cpu / max(accepted, 1) * 1000,
        switches / max(accepted, 1),
    )


class LockSampler:
    """Counts, every 20 ms, the backends of one database waiting on a lock (PostgreSQL)."""

    def __init__(self, url: str) -> None:
        self.engine = create_engine(url, pool_size=1)
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        query = text(
            "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
            "WHERE NOT l.granted AND d.datname = current_database()"
        )
        with self.engine.connect() as connection:
            while not self._stop.wait(0.02):
                self.samples.append(int(connection.execute(query).scalar_one()))
                connection.rollback()

    def __enter__(self) -> "LockSampler":
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.engine.dispose()

    def summary(self) -> tuple[float, float]:
        if not self.samples:
            return 0.0, 0.0
        n = len(self.samples)
        return sum(self.samples) / n, sum(1 for s in self.samples if s) / n


def run_podium(
    label: str,
    source: Path,
    base: str,
    processes: int,
    args: argparse.Namespace,
    work: Path,
    *,
    record: bool = True,
) -> Result:
    key, sub = _files(args.rows)
    url = _throwaway(base)
    try:
        upgrade(url)
        engine = make_engine(url)
        tokens = []
        with unit_of_work(make_session_factory(engine)) as session:
            _host, host = create_user(session, name="host", role=Role.organiser, secret_key=SECRET)
            for i in range(args.clients):
                _user, token = create_user(
                    session, name=f"u{i}", role=Role.participant, secret_key=SECRET
                )
                tokens.append(token)
        port = free_port()
        env = {
            **os.environ,
            "PYTHONPATH": str(source),
            "PODIUM_ENV": "test",
            "PODIUM_DATABASE_URL": url,
            "PODIUM_DATA_DIR": str(work / f"data-{uuid.uuid4().hex[:6]}"),
            "PODIUM_SECRET_KEY": SECRET,
            "PODIUM_SCORING_BACKEND": "thread",
            "PODIUM_UPLOADS_PER_MINUTE": "1000000",
            "PODIUM_LOG_LEVEL": "WARNING",
        }
        if args.redis:
            env["PODIUM_REDIS_URL"] = args.redis
            import redis

            redis.Redis.from_url(args.redis).flushdb()
        factory = "app.main:create_app"
        if not record:
            (work / "record_off_app.py").write_text(RECORD_OFF_APP)
            env["PYTHONPATH"] = f"{source}{os.pathsep}{work}"
            factory = "record_off_app:create_app"
        command = [sys.executable, "-m", "uvicorn", factory, "--factory"]
        command += ["--port", str(port), "--workers", str(processes), "--no-access-log"]
        server = _start(command, env, port, work / f"{label}-{processes}.log", cwd=source)
        try:
            http = httpx.Client(
                base_url=f"http://127.0.0.1:{port}{API}",
                headers={"Authorization": f"Bearer {host}"},
                timeout=60,
            )
            body = {
                "slug": "bench",
                "title": "Bench",
                "metric": {"name": "roc_auc"},
                "daily_submission_limit": 10_000,
            }
            made = http.post("/competitions", json=body)
            assert made.status_code == 201, made.text
            answer = http.put("/competitions/bench/answer-key", files={"file": ("key.csv", key)})
            assert answer.status_code == 201, answer.text
            # Warm every process (imports, the first parse) outside the measurement.
            asyncio.run(
                _drive(
                    f"http://127.0.0.1:{port}{API}/competitions/bench/submissions",
                    tokens,
                    processes * 4,
                    sub,
                )
            )
            _wait_scored(engine)
            tree = psutil.Process(server.pid)
            before, switched = _cpu_seconds(tree), _switches(tree)
            with LockSampler(url) as sampler:
                accepted, seconds, latencies = asyncio.run(
                    _drive(
                        f"http://127.0.0.1:{port}{API}/competitions/bench/submissions",
                        tokens,
                        args.uploads,
                        sub,
                    )
                )
            _wait_scored(engine)  # the scoring's CPU is the upload's too
            cpu, switches = _cpu_seconds(tree) - before, _switches(tree) - switched
        finally:
            server.terminate()
            server.wait(timeout=60)
        engine.dispose()
        result = _summary(label, processes, accepted, seconds, latencies, cpu, switches)
        result.waiting = sampler.summary()
        return result
    finally:
        _drop(base, url)


def _wait_scored(engine) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        with engine.connect() as connection:
            waiting = connection.scalar(
                select(func.count(Submission.id)).where(
                    Submission.status.in_([SubmissionStatus.queued, SubmissionStatus.scoring])
                )
            )
        if not waiting:
            return
        time.sleep(0.2)
    raise SystemExit("submissions were not scored in time")


def run_floor(base: str, processes: int, args: argparse.Namespace, work: Path) -> Result:
    _key, sub = _files(args.rows)
    url = _throwaway(base)
    try:
        engine = create_engine(url)
        with engine.begin() as connection:
            connection.execute(
                text("CREATE TABLE bare_uploads (id serial PRIMARY KEY, name text, size int)")
            )
        engine.dispose()
        (work / "bare_upload_app.py").write_text(BARE_APP)
        port = free_port()
        pool = str(-(-args.clients // processes))  # a process's share of the clients, rounded up
        env = {
            **os.environ,
            "PYTHONPATH": str(work),
            "BARE_DATABASE_URL": url,
            "BARE_POOL_SIZE": pool,
        }
        command = [sys.executable, "-m", "uvicorn", "bare_upload_app:app", "--port", str(port)]
        command += ["--workers", str(processes), "--no-access-log"]
        server = _start(command, env, port, work / f"floor-{processes}.log")
        try:
            target = f"http://127.0.0.1:{port}/upload"
            asyncio.run(_drive(target, ["x"] * args.clients, processes * 4, sub))
            tree = psutil.Process(server.pid)
            before, switched = _cpu_seconds(tree), _switches(tree)
            accepted, seconds, latencies = asyncio.run(
                _drive(target, ["x"] * args.clients, args.uploads, sub)
            )
            cpu, switches = _cpu_seconds(tree) - before, _switches(tree) - switched
        finally:
            server.terminate()
            server.wait(timeout=60)
        return _summary("floor", processes, accepted, seconds, latencies, cpu, switches)
    finally:
        _drop(base, url)


class RecordSwitch:
    """The record on or off in this process, as RECORD_OFF_APP switches it in a server's."""

    def __init__(self) -> None:
        from app.ledger import facts, record

        self.facts, self.record, self.append = facts, record, facts.append

    def __call__(self, on: bool) -> None:
        from sqlalchemy import event
        from sqlalchemy.orm import Session

        hook = self.record._write_appended
        self.facts.append = self.append if on else (lambda *_a, **_k: None)  # type: ignore[assignment]
        if on and not event.contains(Session, "before_commit", hook):
            event.listen(Session, "before_commit", hook)
        if not on and event.contains(Session, "before_commit", hook):
            event.remove(Session, "before_commit", hook)


def run_in_process(base: str, args: argparse.Namespace) -> None:
    """One thread, one client, no other load of ours: blocks of uploads with the record on and
    off in turn, then their scoring in batches of ``--clients`` the same way. CPU seconds of this
    process (time.process_time) and wall per upload, medians of the blocks: the record's own
    cost, without the lock waits of concurrent appends (the server runs measure those)."""
    from app.config import Settings
    from app.jobs.score import score_submissions
    from app.main import create_app
    from tests.asgi_client import TestClient
    from tests.helpers import ParkedQueue

    key, sub = _files(args.rows)
    url = _throwaway(base)
    switch = RecordSwitch()
    try:
        upgrade(url)
        engine = make_engine(url)
        factory = make_session_factory(engine)
        with unit_of_work(factory) as session:
            _host, host = create_user(session, name="host", role=Role.organiser, secret_key=SECRET)
            users = [
                create_user(session, name=f"u{i}", role=Role.participant, secret_key=SECRET)[1]
                for i in range(args.clients)
            ]
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(
                env="test",
                database_url=url,
                data_dir=Path(tmp),
                secret_key=SECRET,
                uploads_per_minute=1_000_000,
                scoring_backend="eager",
            )
            queue = ParkedQueue()
            with TestClient(
                create_app(settings, session_factory=factory, scoring_queue=queue)
            ) as client:
                auth = {"Authorization": f"Bearer {host}"}
                body = {"slug": "bench", "title": "Bench", "metric": {"name": "roc_auc"}}
                made = client.post(
                    f"{API}/competitions",
                    json={**body, "daily_submission_limit": 10_000},
                    headers=auth,
                )
                assert made.status_code == 201, made.text
                answer = client.put(
                    f"{API}/competitions/bench/answer-key",
                    files={"file": ("key.csv", key)},
                    headers=auth,
                )
                assert answer.status_code == 201, answer.text
                upload_cost: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
                score_cost: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
                blocks = max(2, args.uploads // args.clients)
                for block in range(blocks * 2):
                    # On, off, off, on, ...: each mode goes first as often as second, so the
                    # tables' growth from block to block (the standings read every score of
                    # the phase) favours neither; alternating on, off always ran off on 20
                    # more submissions and charged it their cost.
                    on = block % 4 in (0, 3)
                    switch(on)
                    queue.ids.clear()
                    cpu, wall = time.process_time(), time.perf_counter()
                    for token in users:
                        answer = client.post(
                            f"{API}/competitions/bench/submissions",
                            files={"file": ("sub.csv", sub, "text/csv")},
                            headers={"Authorization": f"Bearer {token}"},
                        )
                        assert answer.status_code == 202, answer.text
                    n = len(users)
                    upload_cost[on].append(
                        ((time.process_time() - cpu) / n, (time.perf_counter() - wall) / n)
                    )
                    cpu, wall = time.process_time(), time.perf_counter()
                    score_submissions(factory, list(queue.ids), settings)
                    score_cost[on].append(
                        ((time.process_time() - cpu) / n, (time.perf_counter() - wall) / n)
                    )
                switch(True)
        engine.dispose()
    finally:
        _drop(base, url)
    for what, cost in (("upload", upload_cost), ("score (batched)", score_cost)):
        on_cpu = statistics.median(c for c, _ in cost[True]) * 1000
        off_cpu = statistics.median(c for c, _ in cost[False]) * 1000
        on_wall = statistics.median(w for _, w in cost[True]) * 1000
        off_wall = statistics.median(w for _, w in cost[False]) * 1000
        print(
            f"{what:>16}: CPU {on_cpu:.2f} ms with the record, {off_cpu:.2f} without "
            f"({on_cpu / off_cpu:.3f}x); wall {on_wall:.2f} / {off_wall:.2f} ms "
            f"({on_wall / off_wall:.3f}x, so {off_wall / on_wall:.3f}x the rate)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--uploads", type=int, default=400)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--redis", default=None, help="PODIUM_REDIS_URL for Podium")
    parser.add_argument("--previous", type=Path, default=None, help="another checkout to run too")
    parser.add_argument(
        "--previous-first", action="store_true", help="run the previous checkout first"
    )
    parser.add_argument(
        "--record",
        default="on",
        help="on, off, or on,off: this checkout with the record, without it, or both side by "
        "side (then the ratio of their uploads/s is printed)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="measure the record's own cost in this process instead (one client, blocks of "
        "--clients uploads with the record on and off in turn, then their scoring)",
    )
    args = parser.parse_args()
    base = os.environ.get("PODIUM_TEST_DATABASE_URL")
    if not base:
        raise SystemExit("set PODIUM_TEST_DATABASE_URL to a PostgreSQL server")
    if args.in_process:
        print(f"load average before: {os.getloadavg()[0]:.1f}")
        run_in_process(base, args)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        return
    print(
        f"{os.cpu_count()} cores, {args.clients} clients, {args.uploads} uploads of "
        f"{args.rows} rows per row below; load average before: {os.getloadavg()[0]:.1f}"
    )
    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for index, processes in enumerate(int(p) for p in args.processes.split(",")):
            floor = run_floor(base, processes, args, work)
            results.append(floor)
            modes = [m.strip() for m in args.record.split(",") if m.strip()]
            runs: list[tuple[str, Path, bool]] = [
                ("podium" if mode == "on" else "unrecorded", ROOT, mode == "on") for mode in modes
            ]
            if args.previous is not None:
                runs.append(("previous", args.previous.resolve(), True))
            # Which goes first alternates with the process count: the second of two like
            # runs came out slower here (bench_scoring_job.py measured 10-15 %).
            if len(runs) > 1 and bool(index % 2) != args.previous_first:
                runs.reverse()
            podium = [
                run_podium(label, source, base, processes, args, work, record=record)
                for label, source, record in runs
            ]
            results.extend(podium)
            for result in [floor, *podium]:
                ratio = ""
                if result is not floor:
                    ratio = (
                        f"  {result.rate / floor.rate:.2f}x the floor's rate, "
                        f"{result.cpu_ms / floor.cpu_ms:.1f}x its CPU"
                    )
                if result.waiting is not None:
                    mean, share = result.waiting
                    ratio += f"  lock waiters {mean:.2f} (in {share:.0%} of samples)"
                print(
                    f"{result.label:>10} {result.processes} proc: {result.rate:7.1f} uploads/s "
                    f"p50 {result.p50_ms:6.1f} ms p99 {result.p99_ms:7.1f} ms "
                    f"CPU {result.cpu_ms:5.1f} ms/upload {result.switches:4.0f} switches{ratio}",
                    flush=True,
                )
            by_label = {r.label: r for r in podium}
            if "podium" in by_label and "unrecorded" in by_label:
                on, off = by_label["podium"], by_label["unrecorded"]
                print(
                    f"  the record, {processes} proc: {on.rate / off.rate:.3f}x the uploads/s "
                    f"without it ({(on.rate / off.rate - 1) * 100:+.1f} %), "
                    f"{on.cpu_ms - off.cpu_ms:+.2f} ms CPU/upload",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
