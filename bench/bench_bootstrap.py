"""Bootstrap intervals at scale: 1M rows, 1000 replicates (issue 13's targets).

Prints, per metric, the time of the first submission against a key version (generating and
keeping the key's resamples, then the submission's replicates and intervals) and of a further
submission (the kept resamples reused: in memory, and mapped from the file the server's resample
cache keeps for matrices past its memory budget), and the process's peak RSS. Run in its own
process:

    .venv/bin/python bench/bench_bootstrap.py [--rows 1000000] [--replicates 1000]
"""

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from app.honest.intervals import bootstrap_interval
from app.honest.plans import make_plan
from app.honest.replicates import run
from app.honest.resample import Resamples, seed_for
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
    rng = np.random.default_rng(0)
    y = (rng.random(args.rows) < 0.3).astype(np.float64)
    print(f"rows={args.rows:,} replicates={args.replicates}")
    t0, c0 = time.perf_counter(), time.process_time()
    resamples = Resamples(
        args.rows, seed=seed_for("bench-key", "public"), replicates=args.replicates
    )
    resamples.materialise()
    key_part, key_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"key part (generate and keep the resamples): {key_part:.2f} s "
        f"(CPU {key_cpu:.2f} s), peak RSS {_peak_mb():.0f} MB"
    )
    scratch = tempfile.TemporaryDirectory()
    path = Path(scratch.name) / "counts"
    t0 = time.perf_counter()
    resamples.write(path)
    print(f"written to the resample cache in {time.perf_counter() - t0:.2f} s")
    mapped = Resamples(resamples.n, seed=resamples.seed, replicates=resamples.replicates)
    mapped.read_from(path)
    print(
        f"{'metric':<18} {'first s':>8} {'further s':>10} {'further CPU s':>14} "
        f"{'mapped s':>9} {'BCa interval':>22} {'peak MB':>8}"
    )
    for name in args.metrics.split(","):
        metric = get_metric(name)
        params = metric.parse_params({})
        times, cpu = [], []
        for _ in range(2):
            y_true, y_pred = _submission(name, y, rng)
            t0 = time.perf_counter()
            metric.compute(y_true, y_pred, params)  # the score itself, already stored by then
            t_score = time.perf_counter() - t0
            t0, c0 = time.perf_counter(), time.process_time()
            interval = bootstrap_interval(run(make_plan(name, params, y_true, y_pred), resamples))
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        t0 = time.perf_counter()
        from_file = bootstrap_interval(run(make_plan(name, params, y_true, y_pred), mapped))
        t_mapped = time.perf_counter() - t0
        assert from_file == interval, "the mapped matrix must give the very same interval"
        shown = f"[{interval.bca_low:.4f}, {interval.bca_high:.4f}]"
        print(
            f"{name:<18} {key_part + times[0]:>8.2f} {times[1]:>10.2f} {cpu[1]:>14.2f} "
            f"{t_mapped:>9.2f} {shown:>22} {_peak_mb():>8.0f}"
            f"   (score alone {t_score:.2f} s)"
        )


if __name__ == "__main__":
    main()
