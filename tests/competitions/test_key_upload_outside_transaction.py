"""A real server on SQLite while an answer key or a metric file is checked by a slow custom
metric: the check runs with no transaction open and the request's database slot given back, so
other requests are answered and other uploads accepted meanwhile.

No timing is asserted: the metric sleeps for 8 s, and the other requests must all have been
answered while the slow upload is still running (before the fix they queued behind it)."""

import threading
import time
from pathlib import Path

import httpx

from tests.helpers import API, csv_bytes
from tests.jobs.test_server_while_scoring import custom_competition, running_server

SLEEPY_ON_SLOW_ROWS = b"""
import time


def score(solution, submission, row_id_column_name):
    # Slow only for a key with a row named "slow": the check of the second key.
    if (solution[row_id_column_name].astype(str) == "slow").any():
        time.sleep(8)
    diff = solution["y"].astype(float) - submission["y"].astype(float)
    return float((diff ** 2).mean() ** 0.5)
"""

SLEEPY = b"""
import time


def score(solution, submission, row_id_column_name):
    time.sleep(8)
    return 0.0
"""

SLOW_KEY = csv_bytes(
    ["id", "y", "Usage"], ["a", 1, "Public"], ["b", 2, "Private"], ["slow", 3, "Private"]
)


class Upload(threading.Thread):
    """One PUT in a thread of its own; ``response`` once it is answered."""

    def __init__(self, client: httpx.Client, path: str, headers: dict[str, str], **kw) -> None:  # type: ignore[no-untyped-def]
        super().__init__(daemon=True)
        self._call = lambda: client.put(f"{API}{path}", headers=headers, timeout=120, **kw)
        self.response: httpx.Response | None = None
        self.start()

    def run(self) -> None:
        self.response = self._call()


def _wait_for_file(directory: Path, pattern: str, count: int) -> None:
    """Until the slow upload has stored its file: its check is about to start."""
    deadline = time.monotonic() + 60
    while len(list(directory.glob(pattern))) < count:
        assert time.monotonic() < deadline, f"no file {pattern} in {directory}"
        time.sleep(0.02)


def _others_are_served(client: httpx.Client, alice: dict[str, str]) -> None:
    for path in ("/competitions/own", "/competitions/own/leaderboard", "/competitions", "/me"):
        response = client.get(f"{API}{path}", headers=alice)
        assert response.status_code == 200, response.text
    upload = client.post(
        f"{API}/competitions/own/submissions",
        files={"file": ("sub.csv", csv_bytes(["id", "y"], ["a", 1], ["b", 2]), "text/csv")},
        headers=alice,
    )
    assert upload.status_code == 202, upload.text


def test_requests_and_uploads_are_served_while_a_key_is_checked_by_a_slow_metric(tmp_path):
    with running_server(tmp_path, custom_metric_timeout_seconds="60") as (client, _pid, users):
        host, alice = users
        custom_competition(client, host, SLEEPY_ON_SLOW_ROWS)
        slow = Upload(
            client,
            "/competitions/own/answer-key",
            host,
            files={"file": ("key.csv", SLOW_KEY, "text/csv")},
        )
        _wait_for_file(tmp_path / "data" / "answer-keys", "*/*.upload", 2)

        _others_are_served(client, alice)
        assert slow.is_alive(), "the other requests waited for the key's check"

        slow.join()
        assert slow.response is not None and slow.response.status_code == 201, slow.response
        assert slow.response.json()["version"] == 2


def test_requests_and_uploads_are_served_while_a_slow_metric_file_is_checked(tmp_path):
    with running_server(tmp_path, custom_metric_timeout_seconds="60") as (client, _pid, users):
        host, alice = users
        custom_competition(client, host, SLEEPY_ON_SLOW_ROWS)
        slow = Upload(
            client,
            "/competitions/own/custom-metric",
            host,
            files={"file": ("metric.py", SLEEPY, "text/x-python")},
            data={"direction": "minimize"},
        )
        _wait_for_file(tmp_path / "data" / "metrics", "*/*.py", 2)

        _others_are_served(client, alice)
        assert slow.is_alive(), "the other requests waited for the metric's check"

        slow.join()
        assert slow.response is not None and slow.response.status_code == 200, slow.response
