"""Rank bands at board scale: the windowed computation against testing every pair.

Boards of N teams with B = 1000 shared replicates: ``spread`` (qualities spread like a real
board, dense at the top) and ``equal`` (every team the same quality: every pair is close, the
worst case). Prints seconds per computation and whether both give the same bands.

    .venv/bin/python bench/bench_bands.py [--teams 200,1000,2000,5000] [--every-pair-up-to 2000]
"""

import argparse
import time

import numpy as np

from app.honest.engine._normal import norm_cdf
from app.honest.engine.compare import holm, rank_bands


def every_pair(points: np.ndarray, replicates: np.ndarray) -> np.ndarray:
    """The definition: all N(N − 1)/2 p-values, then Holm (the implementation before windows)."""
    n = points.size
    cov = np.cov(replicates)
    i, j = np.triu_indices(n, k=1)
    diff = points[i] - points[j]
    se = np.sqrt(np.maximum(cov[i, i] + cov[j, j] - 2 * cov[i, j], 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, np.abs(diff) / se, np.where(diff != 0, np.inf, 0.0))
    rejected = holm(np.minimum(1.0, 2 * (1 - norm_cdf(z))))
    better = np.zeros(n, dtype=np.int64)
    np.add.at(better, np.where(diff > 0, j, i)[rejected], 1)
    return 1 + better


def board(kind: str, n: int, b: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    # Accuracy on 10,000 public rows: a replicate's sd is about 0.004.
    if kind == "spread":
        quality = 0.9 - rng.exponential(0.03, n)
    else:
        quality = np.full(n, 0.85)
    shared = rng.normal(0, 0.003, b)
    replicates = quality[:, None] + shared[None, :] + rng.normal(0, 0.003, (n, b))
    return quality + rng.normal(0, 0.0005, n), replicates


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--teams", default="200,1000,2000,5000")
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--every-pair-up-to", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'board':<8} {'teams':>6} {'windows s':>10} {'every pair s':>13} {'same':>5}")
    for kind in ("spread", "equal"):
        for n in map(int, args.teams.split(",")):
            points, replicates = board(kind, n, args.replicates, rng)
            t0 = time.perf_counter()
            bands = rank_bands(points, replicates, greater_is_better=True)
            fast = time.perf_counter() - t0
            slow, same = float("nan"), "-"
            if n <= args.every_pair_up_to:
                t0 = time.perf_counter()
                reference = every_pair(points, replicates)
                slow = time.perf_counter() - t0
                same = str(bool(np.array_equal(bands, reference)))
            print(f"{kind:<8} {n:>6} {fast:>10.2f} {slow:>13.2f} {same:>5}")


if __name__ == "__main__":
    main()
