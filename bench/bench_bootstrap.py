"""Bootstrap intervals at scale: 1M rows, 1000 replicates (issue 13's targets).

Runs the server's own path (``app.jobs.honest.resamples_for`` with a scratch data directory, then
the plan, the replicates and the intervals), per metric:

- ``first``: the first submission against a key version: the key's resamples drawn in memory (a
  1 GB count matrix at 1M rows), the submission's replicates and intervals, while the matrix is
  written behind it to the resample cache;
- ``further``: another submission against the same key version, the matrix mapped from the
  resample cache (wall and CPU time);
- the process's peak RSS so far.

Each metric gets a key version of its own, so each ``first`` is a true first. Matrices of at most
512 MB (up to 512k rows at 1000 replicates) stay in memory instead; ``--rows 400000`` times that
path. The score itself, stored before any of this starts, is shown for scale. Run in its own
process:

    .venv/bin/python bench/bench_bootstrap.py [--rows 1000000] [--replicates 1000]
"""

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from app.config import Settings
from app.honest.engine.intervals import bootstrap_interval
from app.honest.engine.plans import make_plan
from app.honest.engine.replicates import run
from app.jobs import honest as stats_jobs
from app.metrics import get_metric


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _submission(name: str, y: np.ndarray, rng: np.random.Generator):
    signal = y + rng.normal(0, 1.2, y.size)
    if name == "accuracy":
        return y.astype(np.intp), (signal > 0.5).astype(np.intp)
    if name == "macro_f1":
        labels = np.array(["neg", "pos"], dtype=object)
        return labels[y.astype(np.intp)], labels[(signal > 0.5).astype(np.intp)]
    if name == "log_loss_binary":
        return y, 1 / (1 + np.exp(-(signal - 0.5) * 2))
    return y, signal


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--metrics", default="accuracy,log_loss_binary,macro_f1,roc_auc")
    args = parser.parse_args()
    stats_jobs.REPLICATES = args.replicates
    scratch = tempfile.TemporaryDirectory()
    settings = Settings(data_dir=Path(scratch.name))
    rng = np.random.default_rng(0)
    y = (rng.random(args.rows) < 0.3).astype(np.float64)
    mapped = args.rows * args.replicates > stats_jobs._CACHE_BYTES // 2
    print(
        f"rows={args.rows:,} replicates={args.replicates}: count matrix "
        f"{args.rows * args.replicates / 2**20:,.0f} MB, "
        f"{'written to the resample cache and mapped' if mapped else 'kept in memory'}"
    )
    # On a fresh virtual machine the hypervisor backs guest memory on first touch (here 4 s for
    # the first GB, 0.2 s once touched): shown apart, so the first row does not carry it.
    t0 = time.perf_counter()
    np.ones(args.rows * args.replicates + (256 << 20), dtype=np.uint8)
    print(f"memory warm-up (touch the matrix's size once): {time.perf_counter() - t0:.2f} s")
    print(
        f"{'metric':<18} {'first s':>8} {'CPU s':>6} {'further s':>10} {'CPU s':>6} "
        f"{'BCa interval':>22} {'peak MB':>8}"
    )
    for name in args.metrics.split(","):
        metric = get_metric(name)
        params = metric.parse_params({})
        key_sha = f"bench-key-{name}"
        wall, cpu, intervals = [], [], []
        for _ in range(2):
            y_true, y_pred = _submission(name, y, rng)
            t0 = time.perf_counter()
            metric.compute(y_true, y_pred, params)  # the score itself, already stored by then
            t_score = time.perf_counter() - t0
            t0, c0 = time.perf_counter(), time.process_time()
            resamples = stats_jobs.resamples_for(key_sha, "public", args.rows, settings)
            plan = make_plan(name, params, y_true, y_pred)
            intervals.append(bootstrap_interval(run(plan, resamples)))
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            del resamples
            stats_jobs.wait_for_writes()  # the next submission finds the file
        shown = f"[{intervals[1].bca_low:.4f}, {intervals[1].bca_high:.4f}]"
        print(
            f"{name:<18} {wall[0]:>8.2f} {cpu[0]:>6.2f} {wall[1]:>10.2f} {cpu[1]:>6.2f} "
            f"{shown:>22} {_peak_mb():>8.0f}   (score alone {t_score:.2f} s)"
        )


if __name__ == "__main__":
    main()
