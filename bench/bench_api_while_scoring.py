"""The API while the server scores: issue 8's 60-second custom metric, and a large submission.

Starts a real server (uvicorn, SQLite, the scoring thread) as the tests do
(``tests/jobs/test_server_while_scoring.py``) and measures:

- ``slow metric``: a custom metric (in its jail) that sleeps ``--metric-seconds``; meanwhile reads
  (competition, leaderboard, list) are timed back to back, and one upload; p50/p99/max in ms.
- ``large submission``: the server's RSS (VmRSS, sampled every 10 ms) before, at its peak while a
  ``--rows``-row gzipped submission is scored, and after, once scored in a child process (the
  default above ``PODIUM_SCORING_IN_CHILD_BYTES``) and once in the server itself, and the ratio
  of the two peaks. (The tests assert only that the requests are answered meanwhile and that the
  large file goes to a child; these figures are what they used to assert: reads p50 < 200 ms,
  max < 1 s, an upload < 1 s; the server's peak < +24 MiB and after < +16 MiB in the child case.)

    python bench/bench_api_while_scoring.py                       # 60 s metric, 1.5M rows
    python bench/bench_api_while_scoring.py --metric-seconds 10 --rows 500000
"""

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import API, csv_bytes  # noqa: E402
from tests.jobs.test_server_while_scoring import (  # noqa: E402
    KEY,
    _big_files,
    _rss_bytes,
    _submit,
    _wait_for,
    running_server,
)

MIB = 1024 * 1024


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"p50 {statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
        f"max {ordered[-1] * 1000:.1f} ms ({len(ordered)} requests)"
    )


def slow_metric(seconds: float) -> None:
    metric = f"""
import time

def score(solution, submission, row_id_column_name):
    if (submission["y"].astype(float) == 7).any():
        time.sleep({seconds})
    return float(((solution["y"].astype(float) - submission["y"].astype(float)) ** 2).mean())
""".encode()
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_server(Path(tmp), custom_metric_timeout_seconds=str(seconds + 30)) as (
            client,
            _pid,
            (host, alice),
        ),
    ):
        body = {"slug": "own", "title": "Own", "metric": {"name": "custom"}}
        client.post(f"{API}/competitions", json=body, headers=host).raise_for_status()
        client.put(
            f"{API}/competitions/own/answer-key",
            files={"file": ("key.csv", KEY, "text/csv")},
            headers=host,
        ).raise_for_status()
        client.put(
            f"{API}/competitions/own/custom-metric",
            files={"file": ("metric.py", metric, "text/x-python")},
            data={"direction": "minimize"},
            headers=host,
        ).raise_for_status()
        slow = _submit(client, alice, csv_bytes(["id", "y"], ["a", 7], ["b", 2]), "own").json()
        _wait_for(client, alice, slow["id"], {"scoring"})
        started = time.monotonic()
        reads, uploads = [], []
        paths = ("/competitions/own", "/competitions/own/leaderboard", "/competitions")
        while time.monotonic() - started < seconds - 2:
            for path in paths:
                t = time.monotonic()
                client.get(f"{API}{path}", headers=alice).raise_for_status()
                reads.append(time.monotonic() - t)
            if len(uploads) < 3 and time.monotonic() - started > seconds / 4 * (len(uploads) + 1):
                t = time.monotonic()
                quick = _submit(client, alice, csv_bytes(["id", "y"], ["a", 1], ["b", 2]), "own")
                uploads.append(time.monotonic() - t)
                assert quick.status_code == 202, quick.text
        state = client.get(f"{API}/submissions/{slow['id']}", headers=alice).json()["status"]
        print(f"slow metric ({seconds:g} s, still '{state}' at the end of the reads)")
        print(f"  reads:   {_ms(reads)}")
        print(f"  uploads: {_ms(uploads)}, all 202")


def large_submission(rows: int, in_child: bool) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        key, sub = _big_files(Path(tmp), rows)
        threshold = str(MIB if in_child else 10**15)
        with running_server(Path(tmp), scoring_in_child_bytes=threshold) as (client, pid, users):
            host, alice = users
            body = {"slug": "big", "title": "Big", "metric": {"name": "rmse"}}
            client.post(f"{API}/competitions", json=body, headers=host).raise_for_status()
            with open(key, "rb") as fh:
                client.put(
                    f"{API}/competitions/big/answer-key",
                    files={"file": ("key.csv", fh, "text/csv")},
                    headers=host,
                ).raise_for_status()
            time.sleep(1)
            before = _rss_bytes(pid)
            peaks, done = [before], threading.Event()

            def sample() -> None:
                while not done.is_set():
                    peaks.append(_rss_bytes(pid))
                    time.sleep(0.01)

            sampler = threading.Thread(target=sample)
            sampler.start()
            t = time.monotonic()
            submitted = _submit(client, alice, sub.read_bytes(), "big").json()
            view = _wait_for(client, alice, submitted["id"], {"scored", "failed"}, 600)
            seconds = time.monotonic() - t
            done.set()
            sampler.join()
            time.sleep(1)
            after = _rss_bytes(pid)
        where = "in a child process" if in_child else "in the server process"
        print(
            f"large submission ({rows:,} rows, {sub.stat().st_size / MIB:.1f} MiB gzipped) "
            f"scored {where} in {seconds:.1f} s ({view['status']}): server RSS "
            f"{before / MIB:.0f} MiB before, peak +{(max(peaks) - before) / MIB:.0f} MiB, "
            f"after +{(after - before) / MIB:.0f} MiB"
        )
        return max(peaks) - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metric-seconds", type=float, default=60.0)
    parser.add_argument("--rows", type=int, default=1_500_000)
    args = parser.parse_args()
    slow_metric(args.metric_seconds)
    child = large_submission(args.rows, in_child=True)
    server = large_submission(args.rows, in_child=False)
    print(
        f"peak growth, in a child / in the server: {child / MIB:.0f} / {server / MIB:.0f} MiB"
        f" = {child / max(server, 1):.2f}"
    )


if __name__ == "__main__":
    main()
