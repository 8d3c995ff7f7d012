"""How soon a custom metric's limits stop it: a metric that loops forever and one that allocates
without end, in the jail as the server runs them, against the time limit they were given.

The tests (``tests/custom_metrics/test_custom_metric_sandbox.py``) assert that each is stopped
for its reason and leaves no process; this prints the seconds it took, and their ratio to the
time limit (the test used to assert the loop stopped within the limit + 3 s).

    python bench/bench_custom_metric_limits.py
    python bench/bench_custom_metric_limits.py --timeout 4 --runs 5
"""

import argparse
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.custom_metrics.sandbox import (  # noqa: E402
    CustomMetricFailure,
    SandboxLimits,
    run_custom_metric,
)

LOOP = """
def score(solution, submission, row_id_column_name):
    while True:
        pass
"""
HOARD = """
def score(solution, submission, row_id_column_name):
    hoard = []
    while True:
        hoard.append(bytearray(16 * 1024 * 1024))
"""


def _stopped(source: str, tmp: Path, limits: SandboxLimits) -> tuple[str, float]:
    metric = tmp / "metric.py"
    metric.write_text(textwrap.dedent(source))
    started = time.monotonic()
    try:
        run_custom_metric(
            metric_path=metric,
            answer_key=tmp / "key.csv",
            submission=tmp / "sub.csv",
            id_column=None,
            params={},
            limits=limits,
        )
    except CustomMetricFailure as exc:
        return exc.kind, time.monotonic() - started
    raise AssertionError("the metric was not stopped")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=4.0, help="the metric's time limit, s")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for file in ("key.csv", "sub.csv"):
            (tmp / file).write_text("id,y\na,1.0\nb,2.0\n")
        for label, source, limits in (
            ("loops forever", LOOP, SandboxLimits(timeout_seconds=args.timeout)),
            (
                "allocates without end",
                HOARD,
                SandboxLimits(timeout_seconds=args.timeout, memory_bytes=512 * 1024**2),
            ),
        ):
            runs = [_stopped(source, tmp, limits) for _ in range(args.runs)]
            seconds = [s for _, s in runs]
            median = statistics.median(seconds)
            print(
                f"{label}: stopped ({', '.join(sorted({k for k, _ in runs}))}) after "
                f"median {median:.2f} s, max {max(seconds):.2f} s over {args.runs} runs; "
                f"median / time limit = {median / args.timeout:.2f}"
            )


if __name__ == "__main__":
    main()
