"""Issue 8's attacks against a real server: how fast each is refused and the server's peak memory.

The tests (``tests/security/test_abuse.py``) assert that each attack is refused for its reason
while other requests are answered; this prints the figures they used to assert, against the
bounds they held (refused within 10 s, the server's peak at most +300 MB above its resident size;
a valid file's peak under three times its unpacked size, plus the key, plus 64 MB), as ratios.

Peak memory is the server's own ``VmHWM``, reset before each attack by writing 5 to
``/proc/<pid>/clear_refs`` (Linux). Submissions are parsed in the server (the child-process
threshold out of reach), the process measured.

    python bench/bench_abuse.py              # every attack, and a 500,000-row valid file
    python bench/bench_abuse.py --rows 100000
"""

import argparse
import gzip
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import API  # noqa: E402
from tests.jobs.test_server_while_scoring import running_server  # noqa: E402
from tests.security.test_abuse import (  # noqa: E402
    ATTACKS,
    chunked_upload,
    refused,
    target_server,
)

MB = 1 << 20
SECONDS_BOUND = 10.0
EXTRA_RSS_BOUND = 300 * MB


def _status(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmHWM", "VmRSS"):
            fields[name] = int(value.split()[0]) * 1024
    return fields


class Peak:
    """The server's peak RSS above its resident size at the start."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        self.base = _status(pid)["VmRSS"]

    @property
    def extra(self) -> int:
        return _status(self.pid)["VmHWM"] - self.base


def attacks() -> None:
    with tempfile.TemporaryDirectory() as tmp, target_server(Path(tmp)) as server:
        pid = server[1]
        print(f"{'attack':<22} {'refused in':>10} {'/10 s':>6} {'peak':>9} {'/300 MB':>8}  reason")
        for build in ATTACKS:
            path = build(Path(tmp))
            peak = Peak(pid)
            started = time.monotonic()
            reason = refused(server, path)
            seconds, extra = time.monotonic() - started, peak.extra
            print(
                f"{build.__name__:<22} {seconds:>8.2f} s {seconds / SECONDS_BOUND:>6.2f} "
                f"{extra / MB:>+6.0f} MB {extra / EXTRA_RSS_BOUND:>8.2f}  {reason[:60]!r}"
            )
            path.unlink()
        peak = Peak(pid)
        status, sent = chunked_upload(server)
        print(
            f"{'chunked_upload':<22} {status:>10} {'':>6} {peak.extra / MB:>+6.0f} MB "
            f"{peak.extra / EXTRA_RSS_BOUND:>8.2f}  after {sent / MB:.0f} MB sent"
        )


def valid_file(rows: int) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp_name,
        running_server(Path(tmp_name), scoring_in_child_bytes=str(1 << 50)) as (
            client,
            pid,
            (host, alice),
        ),
    ):
        tmp = Path(tmp_name)
        body = {"slug": "valid", "title": "Valid", "metric": {"name": "roc_auc"}}
        client.post(f"{API}/competitions", json=body, headers=host).raise_for_status()
        key = "id,target,Usage\n" + "".join(
            f"r{i:08d},{i % 2},{'Public' if i % 3 else 'Private'}\n" for i in range(rows)
        )
        client.put(
            f"{API}/competitions/valid/answer-key",
            files={"file": ("key.csv", key.encode(), "text/csv")},
            headers=host,
        ).raise_for_status()
        order = np.random.default_rng(0).permutation(rows)  # shuffled: the join does work
        path = tmp / "sub.csv.gz"
        with gzip.open(path, "wb", compresslevel=1) as out:
            out.write(b"id,target\n")
            for start in range(0, rows, 100_000):
                part = order[start : start + 100_000]
                out.write("".join(f"r{i:08d},0.{i % 7}\n" for i in part).encode())
        size = gzip.open(path).seek(0, 2)
        peak = Peak(pid)
        started = time.monotonic()
        with open(path, "rb") as fh:
            response = client.post(
                f"{API}/competitions/valid/submissions",
                files={"file": ("sub.csv.gz", fh, "application/gzip")},
                headers=alice,
            )
        response.raise_for_status()
        url = f"{API}/submissions/{response.json()['id']}"
        while (view := client.get(url, headers=alice).json())["status"] in ("queued", "scoring"):
            time.sleep(0.05)
        seconds, extra = time.monotonic() - started, peak.extra
        bound = 3 * size + len(key) + 64 * MB
        print(
            f"valid file: {rows:,} rows, {size / MB:.0f} MB unpacked, key {len(key) / MB:.0f} MB: "
            f"{view['status']} in {seconds:.1f} s, peak +{extra / MB:.0f} MB = "
            f"{extra / bound:.2f} of 3 x size + key + 64 MB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000, help="rows of the valid file")
    args = parser.parse_args()
    attacks()
    valid_file(args.rows)


if __name__ == "__main__":
    main()
