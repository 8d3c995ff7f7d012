"""An upload's two costs apart, in process: the request's CPU and its scoring job's CPU, with the
SQL statements each one sends (issue 23).

A throw-away PostgreSQL database (``PODIUM_TEST_DATABASE_URL``); ``--teams`` users, each a team,
upload a ``--rows``-row ``roc_auc`` file ``--per-team`` times (default twice; intervals on: the
default), each upload scored
right after its request by ``score_submission`` in this process, so each cost is measured alone
(``time.process_time``). ``--batch N`` scores them N at a time instead, as the embedded scorer
takes what waits in its queue (``score_submissions``; a checkout without it, one by one). ``--previous DIR`` runs the same on another checkout (``git archive REV |
tar -x -C DIR``) in the same run, each checkout in a child process, alternately ``--rounds``
times (which goes first alternating too), and prints each round's ratios and their medians.

    PODIUM_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1/postgres \\
        python bench/bench_scoring_job.py --previous /tmp/podium-prev
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import import_module
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(teams: int, rows: int, batch: int = 1, per_team: int = 2) -> dict[str, float]:
    """Run in the checkout on sys.path[0]: CPU ms and statements per request and per scoring
    (with ``batch``, the uploads scored that many at a time, where the checkout can)."""
    from fastapi.testclient import TestClient
    from sqlalchemy import Engine, event

    from app.auth.service import create_user
    from app.config import Settings
    from app.db import make_engine, make_session_factory, unit_of_work
    from app.jobs import score as jobs
    from app.main import create_app
    from app.migrate import upgrade
    from app.models import Role
    from bench.bench_upload import _drop, _files, _throwaway
    from tests.helpers import ParkedQueue  # remembers the ids: the bench scores each itself

    base = os.environ["PODIUM_TEST_DATABASE_URL"]
    url = _throwaway(base)
    try:
        upgrade(url)
        engine = make_engine(url)
        factory = make_session_factory(engine)
        secret = "s" * 40
        with unit_of_work(factory) as session:
            _user, host = create_user(session, name="host", role=Role.organiser, secret_key=secret)
            tokens = [
                create_user(session, name=f"u{i}", role=Role.participant, secret_key=secret)[1]
                for i in range(teams)
            ]
        settings = Settings(
            env="test",
            database_url=url,
            data_dir=Path(tempfile.mkdtemp()),
            secret_key=secret,
            scoring_backend="eager",
            uploads_per_minute=1_000_000,
        )
        queue = ParkedQueue()
        key, body = _files(rows)
        statements = [0]
        # Every engine's, and the token reader's, which talks to PostgreSQL without SQLAlchemy
        # (the request's count left it out).
        event.listen(
            Engine,
            "before_cursor_execute",
            lambda *_a: statements.__setitem__(0, statements[0] + 1),
        )
        try:
            reader = import_module("app.auth.token_reader").TokenReader
        except ModuleNotFoundError:
            reader = None  # a checkout before the reader: its token read is an engine's
        if reader is not None:
            read = reader._read

            async def counted(self, *args):  # type: ignore[no-untyped-def]
                statements[0] += 1
                return await read(self, *args)

            reader._read = counted
        with TestClient(
            create_app(settings, session_factory=factory, scoring_queue=queue)
        ) as client:
            headers = {"Authorization": f"Bearer {host}"}
            made = client.post(
                "/api/v1/competitions",
                json={
                    "slug": "bench",
                    "title": "Bench",
                    "metric": {"name": "roc_auc"},
                    "daily_submission_limit": 10_000,
                },
                headers=headers,
            )
            assert made.status_code == 201, made.text
            answer = client.put(
                "/api/v1/competitions/bench/answer-key",
                files={"file": ("key.csv", key)},
                headers=headers,
            )
            assert answer.status_code == 201, answer.text
            request_cpu = scoring_cpu = 0.0
            request_sql = scoring_sql = 0
            uploads = [tokens[i % teams] for i in range(per_team * teams)]
            together = getattr(jobs, "score_submissions", None)  # a checkout before: one by one
            for n, token in enumerate(uploads, 1):
                started, sent = time.process_time(), statements[0]
                response = client.post(
                    "/api/v1/competitions/bench/submissions",
                    files={"file": ("sub.csv", body, "text/csv")},
                    headers={"Authorization": f"Bearer {token}"},
                )
                assert response.status_code == 202, response.text
                request_cpu += time.process_time() - started
                request_sql += statements[0] - sent
                if len(queue.ids) < batch and n < len(uploads):
                    continue
                started, sent = time.process_time(), statements[0]
                if together is not None and len(queue.ids) > 1:
                    together(factory, list(queue.ids), settings)
                else:
                    for submission_id in queue.ids:
                        jobs.score_submission(factory, submission_id, settings)
                queue.ids.clear()
                scoring_cpu += time.process_time() - started
                scoring_sql += statements[0] - sent
        engine.dispose()
        n = len(uploads)
        return {
            "request_ms": 1000 * request_cpu / n,
            "scoring_ms": 1000 * scoring_cpu / n,
            "request_sql": request_sql / n,
            "scoring_sql": scoring_sql / n,
        }
    finally:
        _drop(base, url)


def _line(label: str, r: dict[str, float]) -> str:
    return (
        f"{label:>9}: request {r['request_ms']:5.1f} ms CPU, {r['request_sql']:4.1f} statements; "
        f"scoring {r['scoring_ms']:5.1f} ms CPU, {r['scoring_sql']:4.1f} statements"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--teams", type=int, default=40)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument(
        "--batch", type=int, default=1, help="score the uploads this many at a time (1: each alone)"
    )
    parser.add_argument(
        "--per-team",
        type=int,
        default=2,
        help="uploads by each team (a longer history: does a job's cost grow with it?)",
    )
    parser.add_argument("--previous", type=Path, default=None, help="another checkout to run too")
    parser.add_argument("--rounds", type=int, default=4, help="alternations with --previous")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the child's
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.teams, args.rows, args.batch, args.per_team)))
        return
    print(
        f"{os.cpu_count()} cores, {args.teams} teams x {args.per_team} uploads of {args.rows} rows, "
        f"scored {args.batch} at a time"
    )
    if args.previous is None:
        print(_line("podium", measure(args.teams, args.rows, args.batch, args.per_team)))
        return
    # Each checkout in a child of its own, alternately: the host's speed drifts by tens of
    # percent within minutes here, so one run of each, one after the other, compares the hours
    # they ran in as much as the code.
    ratios: list[tuple[float, float]] = []
    for round_ in range(args.rounds):
        # Which goes first alternates too: the second of a pair ran 10-15 % slower here.
        if round_ % 2:
            before = _measure_in(args.previous, args)
            now = _measure_in(ROOT, args)
        else:
            now = _measure_in(ROOT, args)
            before = _measure_in(args.previous, args)
        print(_line("podium", now))
        print(_line("previous", before))
        ratios.append(
            (now["request_ms"] / before["request_ms"], now["scoring_ms"] / before["scoring_ms"])
        )
        print(f"   ratios: request {ratios[-1][0]:.2f}x, scoring {ratios[-1][1]:.2f}x")
    if len(ratios) > 1:
        request, scoring = (statistics.median(r[i] for r in ratios) for i in (0, 1))
        print(f"   median of {len(ratios)}: request {request:.2f}x, scoring {scoring:.2f}x")


def _measure_in(source: Path, args: argparse.Namespace) -> dict[str, float]:
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHILD,
            str(source),
            str(args.teams),
            str(args.rows),
            str(args.batch),
            str(args.per_team),
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(source)},
    )
    return json.loads(child.stdout.strip().splitlines()[-1])


# The previous checkout measured by this file's own measure(), with that checkout's app imported.
_CHILD = f"""
import json, runpy, sys
source, teams, rows, batch, per_team = sys.argv[1], *map(int, sys.argv[2:6])
sys.path[:0] = [source, {str(ROOT)!r}]
bench = runpy.run_path({str(Path(__file__).resolve())!r}, run_name="bench")
print(json.dumps(bench["measure"](teams, rows, batch, per_team)))
"""

if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
