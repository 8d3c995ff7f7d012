"""A real server on SQLite while an answer key or a metric file is checked by a slow custom
metric: the check runs with no transaction open and the request's database slot given back, so
other requests are answered and other uploads accepted meanwhile.

No timing is asserted and no window is guessed: the slow check waits on a process of its own
(``sleep <marker>``) that the test finds from outside and kills only once the other requests
have all been answered; the slow upload must still be running then (before the fix they queued
behind it), and it completes after."""

import contextlib
import os
import signal
import threading
import time
import uuid

import httpx

from tests.custom_metrics.processes import processes_with_argument
from tests.helpers import API, csv_bytes
from tests.jobs.test_server_while_scoring import custom_competition, running_server

# Each slow check waits for a process of its own, which the test kills (or which ends by itself
# after 300 s: a hang guard).
SLOW_ON_SLOW_ROWS = """
import subprocess


def score(solution, submission, row_id_column_name):
    # Slow only for a key with a row named "slow": the check of the second key.
    if (solution[row_id_column_name].astype(str) == "slow").any():
        subprocess.Popen(["sleep", "{marker}"]).wait()
    diff = solution["y"].astype(float) - submission["y"].astype(float)
    return float((diff ** 2).mean() ** 0.5)
"""

SLOW = """
import subprocess


def score(solution, submission, row_id_column_name):
    subprocess.Popen(["sleep", "{marker}"]).wait()
    return 0.0
"""


def _marker() -> str:
    return f"300.{uuid.uuid4().int % 10**9}"


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


def _held_by(marker: str, slow: Upload) -> None:
    """Until the slow check waits on its process (a bounded wait)."""
    deadline = time.monotonic() + 120  # a hang guard: the check starts within seconds
    while not processes_with_argument(marker, settle_seconds=0):
        assert slow.is_alive(), f"the slow upload ended before its check waited: {slow.response}"
        assert time.monotonic() < deadline, "the slow check never started"
        time.sleep(0.02)


def _release(marker: str, slow: Upload) -> None:
    """Let the slow check go on: kill its process (each time the metric runs), until answered."""
    deadline = time.monotonic() + 120  # a hang guard
    while slow.is_alive() and time.monotonic() < deadline:
        for pid in processes_with_argument(marker, settle_seconds=0):
            with contextlib.suppress(ProcessLookupError):  # gone meanwhile
                os.kill(pid, signal.SIGKILL)
        slow.join(timeout=0.05)
    assert not slow.is_alive(), "the slow upload was never answered"


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
        marker = _marker()
        custom_competition(client, host, SLOW_ON_SLOW_ROWS.format(marker=marker).encode())
        slow = Upload(
            client,
            "/competitions/own/answer-key",
            host,
            files={"file": ("key.csv", SLOW_KEY, "text/csv")},
        )
        _held_by(marker, slow)

        _others_are_served(client, alice)
        assert slow.is_alive(), "the other requests waited for the key's check"

        _release(marker, slow)
        assert slow.response is not None and slow.response.status_code == 201, slow.response.text
        assert slow.response.json()["version"] == 2


def test_requests_and_uploads_are_served_while_a_slow_metric_file_is_checked(tmp_path):
    with running_server(tmp_path, custom_metric_timeout_seconds="60") as (client, _pid, users):
        host, alice = users
        custom_competition(client, host, SLOW_ON_SLOW_ROWS.format(marker=_marker()).encode())
        marker = _marker()
        slow = Upload(
            client,
            "/competitions/own/custom-metric",
            host,
            files={"file": ("metric.py", SLOW.format(marker=marker).encode(), "text/x-python")},
            data={"direction": "minimize"},
        )
        _held_by(marker, slow)

        _others_are_served(client, alice)
        assert slow.is_alive(), "the other requests waited for the metric's check"

        _release(marker, slow)
        assert slow.response is not None and slow.response.status_code == 200, slow.response
