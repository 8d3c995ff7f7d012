"""Benchmark of the leaderboards: pages and the CSV download from the materialised standings,
against the old path that loaded every submission and ranked it in Python.

For each database (a SQLite file, and the PostgreSQL server in ``PODIUM_TEST_DATABASE_URL``, on
a throw-away database) and each size (submissions from ``--teams`` teams), it migrates a fresh
database, bulk-loads one competition (roc_auc, two selections allowed, some teams with
selections, a few hidden submissions and a banned team), fills the standings with one
``rebuild``, then measures through the ASGI app in process (auth, routing and JSON included):

- ``page``: ``GET …/leaderboard?board=public|private&limit=50&offset=random``;
- ``csv``: ``GET …/leaderboard.csv`` for the whole public board;
- ``old``: the old Python ranking of the whole board (kept here, not in app/), per request.

With ``--uploads N``, it then starts a real server (uvicorn on loopback, the scoring thread) on
the same database and times N small uploads to another competition from 8 users at once, in
alternating rounds with no board readers and with ``--readers`` clients (4, then 16) reading the
big board back to back (pages of both boards and the CSV): upload p50/p99 side by side, and their
ratio. Board reads run side by side (at most ``PODIUM_BOARD_CONCURRENCY`` in flight per process,
app.http.board_gate) and wait for a database slot in turn with the uploads.

    python bench/bench_leaderboard.py                             # 10k and 100k, 5,000 teams
    python bench/bench_leaderboard.py --sizes 100000 --databases sqlite
    python bench/bench_leaderboard.py --sizes 100000 --requests 200 --uploads 400
"""

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import create_engine, func, insert, select, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from app.auth.service import create_user  # noqa: E402
from app.config import Settings  # noqa: E402
from app.db import make_engine, make_session_factory  # noqa: E402
from app.evaluation.metric import metric_for  # noqa: E402
from app.leaderboard import service  # noqa: E402
from app.leaderboard.standings import rebuild  # noqa: E402
from app.main import create_app  # noqa: E402
from app.migrate import upgrade  # noqa: E402
from app.models import (  # noqa: E402
    AnswerKey,
    Competition,
    Role,
    Score,
    Submission,
    SubmissionStatus,
    Team,
    TeamMember,
    User,
)

SECRET = "bench-secret"
API = "/api/v1/competitions/bench"


# --- the old path, as it was in app/leaderboard/service.py --------------------------------------


@dataclass(frozen=True)
class _Entry:
    team_id: int
    submission_id: int
    created_at: datetime
    selected: bool
    baseline: bool
    public: float | None
    private: float | None


def _old_pick(entries, value, maximize):  # type: ignore[no-untyped-def]
    best = None
    for entry in sorted(entries, key=lambda e: (e.created_at, e.submission_id)):
        v = value(entry)
        if v is not None and (best is None or (v > value(best) if maximize else v < value(best))):
            best = entry
    return best


def old_board(session: Session, competition: Competition, key_id: int, board: str) -> list:
    """The whole board by the old code: every submission loaded and ranked in Python."""
    maximize = metric_for(competition).greater_is_better
    query = (
        select(
            Submission.team_id,
            Submission.id,
            Submission.created_at,
            Submission.selected,
            Submission.baseline,
            Score.public_score,
            Score.private_score,
        )
        .join(Score, (Score.submission_id == Submission.id) & (Score.answer_key_id == key_id))
        .join(Team, Team.id == Submission.team_id)
        .where(
            Submission.competition_id == competition.id,
            Submission.hidden.is_(False),
            Submission.late.is_(False),
            Team.banned_at.is_(None),
        )
    )
    by_team: dict[int, list[_Entry]] = {}
    for row in session.execute(query):
        by_team.setdefault(row[0], []).append(_Entry(*row))
    chosen = []
    for team_id, entries in by_team.items():
        best_public = _old_pick(entries, lambda e: e.public, maximize)
        if board == "public":
            entry, value = best_public, best_public.public if best_public else None
        else:
            selected = [e for e in entries if e.selected]
            entry = _old_pick(selected, lambda e: e.private, maximize) if selected else best_public
            value = entry.private if entry else None
        if entry is not None and value is not None:
            chosen.append((team_id, entry, value))
    sign = -1.0 if maximize else 1.0
    chosen.sort(key=lambda c: (sign * c[2], c[1].created_at, c[1].submission_id))
    stats = {
        team_id: (name, count, last)
        for team_id, name, count, last in session.execute(
            select(Team.id, Team.name, func.count(Submission.id), func.max(Submission.created_at))
            .join(Submission, Submission.team_id == Team.id)
            .where(Team.id.in_([c[0] for c in chosen]), Submission.competition_id == competition.id)
            .group_by(Team.id, Team.name)
        )
    }
    return [(stats[t][0], value, stats[t][1]) for t, _entry, value in chosen]


# --- data -----------------------------------------------------------------------------------------


def _postgres_database() -> tuple[str, callable]:  # type: ignore[valid-type]
    base = os.environ.get("PODIUM_TEST_DATABASE_URL")
    if not base:
        raise SystemExit("PODIUM_TEST_DATABASE_URL must name a PostgreSQL server for --databases")
    name = f"podium_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return make_url(base).set(database=name).render_as_string(hide_password=False), drop


def seed(url: str, submissions: int, teams: int, seed_value: int = 7) -> dict:
    """One competition with ``submissions`` scored submissions spread over ``teams`` teams."""
    rng = random.Random(seed_value)
    engine = make_engine(url)
    factory = make_session_factory(engine)
    now = datetime.now(UTC)
    with factory() as session:
        host, host_token = create_user(session, name="host", role=Role.organiser, secret_key=SECRET)
        player, player_token = create_user(
            session, name="player", role=Role.participant, secret_key=SECRET
        )
        session.flush()
        competition = Competition(
            slug="bench",
            title="Bench",
            metric_name="roc_auc",
            metric_params={},
            start=now - timedelta(days=30),
            deadline=now - timedelta(minutes=1),
            created_by_id=host.id,
        )
        session.add(competition)
        session.flush()
        key = AnswerKey(
            competition_id=competition.id,
            version=1,
            path="key.csv",
            sha256="0" * 64,
            id_column="id",
            target_columns=["target"],
            n_rows=100,
            n_public=50,
            n_private=50,
            uploaded_by_id=host.id,
            published_at=now - timedelta(days=30),
        )
        session.add(key)
        session.flush()
        session.execute(
            insert(Team),
            [
                {
                    "id": t + 1,
                    "competition_id": competition.id,
                    "name": f"team-{t:05d}",
                    "created_at": now - timedelta(days=30),
                    "banned_at": now if t == 3 else None,
                }
                for t in range(teams)
            ],
        )
        own_team = teams // 2 + 1
        session.add(TeamMember(team_id=own_team, competition_id=competition.id, user_id=player.id))
        start = now - timedelta(days=29)
        subs, scores = [], []
        for i in range(submissions):
            team = i % teams + 1
            created = start + timedelta(seconds=i * 20)
            subs.append(
                {
                    "id": i + 1,
                    "competition_id": competition.id,
                    "team_id": team,
                    "user_id": player.id,
                    "description": "",
                    "filename": "sub.csv",
                    "path": f"sub-{i}.csv",
                    "size_bytes": 1000,
                    "sha256": "0" * 64,
                    "status": SubmissionStatus.scored,
                    "selected": team % 3 == 0 and i < 2 * teams,
                    "late": False,
                    "refunded": False,
                    "hidden": i % 997 == 0,
                    "baseline": False,
                    "created_at": created,
                    "attempts": 1,
                }
            )
            public = round(rng.random(), 4)
            scores.append(
                {
                    "submission_id": i + 1,
                    "answer_key_id": key.id,
                    "score": public,
                    "public_score": public,
                    "private_score": round(min(1.0, max(0.0, public + rng.gauss(0, 0.05))), 4),
                    "created_at": created,
                }
            )
        for chunk in range(0, submissions, 10_000):
            session.execute(insert(Submission), subs[chunk : chunk + 10_000])
            session.execute(insert(Score), scores[chunk : chunk + 10_000])
        started = time.perf_counter()
        rebuild(session, competition)
        rebuild_s = time.perf_counter() - started
        session.commit()
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            # The rows above came with their ids: move the sequences past them for later inserts.
            for table in ("teams", "submissions", "scores"):
                conn.execute(
                    text(
                        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                        f"(SELECT max(id) FROM {table}))"
                    )
                )
            conn.execute(text("ANALYZE"))
    engine.dispose()
    return {"host": host_token, "player": player_token, "rebuild_s": rebuild_s}


# --- measuring ------------------------------------------------------------------------------------


def _percentiles(times: list[float]) -> dict:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return {"p50_ms": statistics.median(ordered) * 1000, "p99_ms": p99 * 1000, "n": len(ordered)}


def _time(call, n: int) -> dict:  # type: ignore[no-untyped-def]
    call()  # warm
    times = []
    for _ in range(n):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return _percentiles(times)


def measure(url: str, submissions: int, teams: int, requests: int, old_requests: int) -> dict:
    tokens = seed(url, submissions, teams)
    settings = Settings(
        env="test",
        database_url=url,
        secret_key=SECRET,
        scoring_backend="eager",
        data_dir=Path(tempfile.mkdtemp(prefix="podium-bench-")),
    )
    engine = make_engine(url)
    factory = make_session_factory(engine)
    app = create_app(settings, session_factory=factory)
    rng = random.Random(1)
    player = {"Authorization": f"Bearer {tokens['player']}"}
    result = {
        "submissions": submissions,
        "teams": teams,
        "rebuild_s": tokens["rebuild_s"],
        "tokens": tokens,
    }
    with TestClient(app) as client:

        def page(board: str):  # type: ignore[no-untyped-def]
            def call() -> None:
                offset = rng.randrange(0, teams - 50)
                r = client.get(
                    f"{API}/leaderboard?board={board}&limit=50&offset={offset}", headers=player
                )
                assert r.status_code == 200 and len(r.json()["rows"]) == 50, r.text[:300]

            return call

        def whole_csv() -> None:
            r = client.get(f"{API}/leaderboard.csv?board=public", headers=player)
            assert r.status_code == 200 and r.text.count("\n") > teams // 2

        result["public_page"] = _time(page("public"), requests)
        result["private_page"] = _time(page("private"), requests)
        result["csv"] = _time(whole_csv, max(20, requests // 4))
        # The in-process client's own cost on this machine: a request that touches nothing.
        result["healthz"] = _time(lambda: client.get("/healthz"), requests)

    # The same work without HTTP: a fresh session per call, as a request would have.
    with factory() as session:
        player_user = session.scalar(select(User).where(User.name == "player"))
        competition_id = session.scalar(select(Competition.id))

    def service_page(board: str):  # type: ignore[no-untyped-def]
        def call() -> None:
            with factory() as s:
                c = s.get(Competition, competition_id)
                offset = rng.randrange(0, teams - 50)
                lb = service.leaderboard(
                    s, competition=c, board=board, user=player_user, limit=50, offset=offset
                )
                assert len(lb.rows) == 50

        return call

    def service_csv() -> None:
        with factory() as s:
            c = s.get(Competition, competition_id)
            service.leaderboard_csv(s, competition=c, board="public", user=player_user)

    result["service_public_page"] = _time(service_page("public"), requests)
    result["service_private_page"] = _time(service_page("private"), requests)
    result["service_csv"] = _time(service_csv, max(20, requests // 4))

    with factory() as session:
        competition = session.scalar(select(Competition))
        competition_id, key_id = competition.id, competition.board_key.id

    def old(board: str):  # type: ignore[no-untyped-def]
        def call() -> None:
            with factory() as s:
                c = s.get(Competition, competition_id)
                assert len(old_board(s, c, key_id, board)) > teams // 2

        return call

    result["old_public"] = _time(old("public"), old_requests)
    result["old_private"] = _time(old("private"), old_requests)
    engine.dispose()
    return result


# --- uploads while the board is read ---------------------------------------------------------

LOAD_KEY = (
    b"id,target,Usage\na,1,Public\nb,0,Public\nc,1,Public\nd,0,Private\ne,1,Private\nf,0,Private\n"
)
LOAD_SUBMISSION = b"id,target\na,0.9\nb,0.1\nc,0.8\nd,0.2\ne,0.7\nf,0.3\n"
UPLOADERS, READERS = 8, 4


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def uploads_while_reading(
    url: str, tokens: dict, uploads: int, teams: int, readers: int = READERS, rounds: int = 2
) -> dict:
    """Upload latency with and without board readers, through a uvicorn process on loopback."""
    factory = make_session_factory(make_engine(url))
    with factory() as session:
        uploaders = [
            create_user(session, name=f"up{readers}-{i}", role=Role.participant, secret_key=SECRET)[
                1
            ]
            for i in range(UPLOADERS)
        ]
        session.commit()
    factory.kw["bind"].dispose()
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "PODIUM_ENV": "test",
            "PODIUM_DATABASE_URL": url,
            "PODIUM_DATA_DIR": f"{tmp}/data",
            "PODIUM_SECRET_KEY": SECRET,
            "PODIUM_SCORING_BACKEND": "thread",
            "PODIUM_UPLOADS_PER_MINUTE": "1000000",
        }
        log = open(f"{tmp}/server.log", "wb")  # noqa: SIM115
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
            + ["--port", str(port), "--log-level", "warning"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{base}/readyz").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start")
                time.sleep(0.1)
            return _upload_rounds(base, tokens, uploaders, uploads, teams, rounds, readers)
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()


def _upload_rounds(
    base: str,
    tokens: dict,
    uploaders: list[str],
    uploads: int,
    teams: int,
    rounds: int,
    readers: int,
) -> dict:
    host = {"Authorization": f"Bearer {tokens['host']}"}
    with httpx.Client(base_url=base, timeout=120) as client:
        body = {
            "slug": f"load-{readers}",
            "title": "Load",
            "metric": {"name": "roc_auc"},
            "daily_submission_limit": 10_000,
        }
        response = client.post("/api/v1/competitions", json=body, headers=host)
        assert response.status_code == 201, response.text
        response = client.put(
            f"/api/v1/competitions/load-{readers}/answer-key",
            files={"file": ("key.csv", LOAD_KEY, "text/csv")},
            headers=host,
        )
        assert response.status_code == 201, response.text

    def upload(token: str) -> float:
        with httpx.Client(base_url=base, timeout=120) as client:
            started = time.perf_counter()
            response = client.post(
                f"/api/v1/competitions/load-{readers}/submissions",
                files={"file": ("sub.csv", LOAD_SUBMISSION, "text/csv")},
                headers={"Authorization": f"Bearer {token}"},
            )
            elapsed = time.perf_counter() - started
        assert response.status_code == 202, response.text
        return elapsed

    def read(stop: threading.Event, reads: list[float], seed_value: int) -> None:
        rng = random.Random(seed_value)
        player = {"Authorization": f"Bearer {tokens['player']}"}
        with httpx.Client(base_url=base, timeout=120, headers=player) as client:
            while not stop.is_set():
                what = rng.random()
                if what < 0.1:
                    path = f"{API}/leaderboard.csv?board=public"
                else:
                    board = "public" if what < 0.55 else "private"
                    offset = rng.randrange(0, teams - 50)
                    path = f"{API}/leaderboard?board={board}&limit=50&offset={offset}"
                started = time.perf_counter()
                assert client.get(path).status_code == 200
                reads.append(time.perf_counter() - started)

    per_round = max(1, uploads // (2 * rounds))
    alone: list[float] = []
    beside: list[float] = []
    reads: list[float] = []
    upload(uploaders[0])  # warm
    for r in range(rounds):
        tokens_round = [uploaders[i % UPLOADERS] for i in range(per_round)]
        with ThreadPoolExecutor(max_workers=UPLOADERS) as pool:
            alone.extend(pool.map(upload, tokens_round))
        stop = threading.Event()
        reader_threads = [
            threading.Thread(target=read, args=(stop, reads, 100 * r + i)) for i in range(readers)
        ]
        for thread in reader_threads:
            thread.start()
        time.sleep(0.5)  # the readers are under way before the first upload
        try:
            with ThreadPoolExecutor(max_workers=UPLOADERS) as pool:
                beside.extend(pool.map(upload, tokens_round))
        finally:
            stop.set()
            for thread in reader_threads:
                thread.join()
    a, b = _percentiles(alone), _percentiles(beside)
    return {
        "readers": readers,
        "uploads_alone": a,
        "uploads_with_readers": b,
        "board_reads_during_uploads": _percentiles(reads),
        "ratio_p50": b["p50_ms"] / a["p50_ms"],
        "ratio_p99": b["p99_ms"] / a["p99_ms"],
    }


def markdown(results: list[dict]) -> str:
    def pair(m: dict) -> str:
        return f"{m['p50_ms']:.1f} / {m['p99_ms']:.1f}"

    lines = [
        "| database | submissions | public page | private page | whole CSV "
        "| HTTP: public page | HTTP: private page | HTTP: CSV | HTTP: /healthz "
        "| old ranking (public) | old ÷ page (p99) | old ÷ CSV (p99) | rebuild s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        page_p99 = max(r["service_public_page"]["p99_ms"], r["service_private_page"]["p99_ms"])
        old = r["old_public"]
        lines.append(
            f"| {r['database']} | {r['submissions']:,} | {pair(r['service_public_page'])} "
            f"| {pair(r['service_private_page'])} | {pair(r['service_csv'])} "
            f"| {pair(r['public_page'])} | {pair(r['private_page'])} | {pair(r['csv'])} "
            f"| {pair(r['healthz'])} | {pair(old)} | {old['p99_ms'] / page_p99:.0f}× "
            f"| {old['p99_ms'] / r['service_csv']['p99_ms']:.0f}× | {r['rebuild_s']:.2f} |"
        )
    return (
        f"p50 / p99 in ms, {results[0]['teams']:,} teams; the first three columns are the service "
        "call in a fresh session (the database work and the rows; the CSV rendered every time), "
        "the HTTP ones go through the app in process (auth, routing, JSON and the test client's "
        "thread hops; the CSV from the per-process cache while the board stands).\n\n"
        + "\n".join(lines)
    )


def uploads_markdown(results: list[dict]) -> str:
    def pair(m: dict) -> str:
        return f"{m['p50_ms']:.1f} / {m['p99_ms']:.1f}"

    lines = [
        f"Uploads (p50 / p99 ms, {UPLOADERS} uploading at once) with no board readers and with "
        "that many clients reading the board back to back, in alternating rounds:",
        "",
        "| database | submissions on the board | readers | uploads alone | uploads with readers "
        "| ratio p50 | ratio p99 | board reads meanwhile |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        for u in r["uploads"]:
            lines.append(
                f"| {r['database']} | {r['submissions']:,} | {u['readers']} | {pair(u['uploads_alone'])} "
                f"| {pair(u['uploads_with_readers'])} | {u['ratio_p50']:.2f}× | {u['ratio_p99']:.2f}× "
                f"| {pair(u['board_reads_during_uploads'])} (n={u['board_reads_during_uploads']['n']}) |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--teams", type=int, default=5000)
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--old-requests", type=int, default=15)
    parser.add_argument(
        "--uploads", type=int, default=0, help="then time this many uploads with/without readers"
    )
    parser.add_argument(
        "--readers", default="4,16", help="with --uploads: the numbers of board readers to try"
    )
    parser.add_argument("--output", type=Path, default=None, help="write results as JSON")
    args = parser.parse_args()
    results = []
    for database in args.databases.split(","):
        for size in [int(s) for s in args.sizes.split(",")]:
            with tempfile.TemporaryDirectory() as tmp:
                if database == "sqlite":
                    url, drop = f"sqlite:///{tmp}/bench.db", (lambda: None)
                else:
                    url, drop = _postgres_database()
                try:
                    upgrade(url)
                    result = measure(url, size, args.teams, args.requests, args.old_requests)
                    if args.uploads:
                        tokens = result.pop("tokens")
                        result["uploads"] = [
                            uploads_while_reading(url, tokens, args.uploads, args.teams, readers)
                            for readers in [int(k) for k in args.readers.split(",")]
                        ]
                    result.pop("tokens", None)
                finally:
                    drop()
            result["database"] = database
            results.append(result)
            print(json.dumps(result), flush=True)
    print()
    print(markdown(results))
    with_uploads = [r for r in results if "uploads" in r]
    if with_uploads:
        print()
        print(uploads_markdown(with_uploads))
    if args.output:
        args.output.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
