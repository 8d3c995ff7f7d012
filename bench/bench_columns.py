"""Benchmark: one scoring pass over several leaderboard columns against one column.

    python bench/bench_columns.py [--rows 1000000]

A submission file of ``--rows`` regression predictions (with a Usage split) is scored by
``app.scoring.core.score_columns_file`` with one column (rmse) and with four (rmse, mae, r2 and
a computed mean of rmse and mae), side by side, at the given size and at a tenth of it. The file
is read, aligned and validated once either way, so the ratio should stay near 1 (goal: at most
1.5) and flat as the data grows. Best of three runs each.
"""

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.scoring.columns import resolve_columns  # noqa: E402
from app.scoring.core import load_key, score_columns_file  # noqa: E402

ONE = [{"key": "rmse", "metric": {"name": "rmse"}}]
FOUR = [
    *ONE,
    {"key": "mae", "metric": {"name": "mae"}},
    {"key": "r2", "metric": {"name": "r2"}},
    {"key": "mean", "computed": {"op": "mean", "of": ["rmse", "mae"]}},
]


def _best(fn: Callable[[], object], runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _files(directory: Path, rows: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    ids = np.arange(rows)
    truth = rng.normal(size=rows)
    usage = np.where(rng.random(rows) < 0.3, "Public", "Private")
    key, submission = directory / f"key-{rows}.csv", directory / f"sub-{rows}.csv"
    with key.open("w") as out:
        out.write("id,y,Usage\n")
        out.writelines(f"{i},{t:.6f},{u}\n" for i, t, u in zip(ids, truth, usage, strict=True))
    with submission.open("w") as out:
        out.write("id,y\n")
        noisy = truth + rng.normal(scale=0.5, size=rows)
        out.writelines(f"{i},{p:.6f}\n" for i, p in zip(ids, noisy, strict=True))
    return key, submission


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for rows in (args.rows // 10, args.rows):
            key_path, submission = _files(Path(tmp), rows)
            one, four = resolve_columns(ONE), resolve_columns(FOUR)
            reading = one[0]
            key = load_key(
                key_path,
                metric=reading.metric,  # type: ignore[arg-type]
                params=reading.params,  # type: ignore[arg-type]
                id_column=None,
                check=False,
            )
            t1 = _best(lambda: score_columns_file(submission, columns=one, key=key))  # noqa: B023
            t4 = _best(lambda: score_columns_file(submission, columns=four, key=key))  # noqa: B023
            print(
                f"{rows:>10,} rows: 1 column {t1:.3f} s, 4 columns {t4:.3f} s, "
                f"ratio {t4 / t1:.2f} (goal <= 1.5)"
            )


if __name__ == "__main__":
    main()
