"""The shake-up report: how far the private board moved from the public one, and whether the
public board was overfit adaptively.

- Rank agreement: Spearman's ρ (Pearson's r of mid-ranks) and Kendall's τ-b between the public
  and private ranks of the same teams.
- Movement: mean |public rank − private rank| / N over all teams and over the public top 10 %.
- The gap: the mean over teams of (public − private), oriented so positive means the public board
  looked better than the private truth, with a paired percentile interval (each replicate pairs the
  public and private resample of the same index, for every team at once).
- The null: the same gap over random public/private re-splits of the rows (same sizes), for the
  same final submissions. No team chose its submission by a re-split's public score, so without
  adaptive overfitting the observed gap is one more draw from the null; the report flags the
  competition when the observed gap exceeds the null's 95th percentile, in the exact form of a
  permutation test: p = (1 + #{null ≥ gap}) / (1 + R) ≤ 0.05.
"""

from dataclasses import asdict, dataclass

import numpy as np

from app.honest.engine.plans import Plan
from app.honest.engine.replicates import run
from app.honest.engine.resample import fixed_counts


def midranks(values: np.ndarray, *, greater_is_better: bool) -> np.ndarray:
    """Rank 1 for the best; ties share the mean of their positions."""
    x = -np.asarray(values, dtype=np.float64) if greater_is_better else np.asarray(values, float)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    _, start, counts = np.unique(sorted_x, return_index=True, return_counts=True)
    mean_rank = start + (counts + 1) / 2.0
    ranks = np.empty(x.size)
    ranks[order] = np.repeat(mean_rank, counts)
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra = a - a.mean()
    rb = b - b.mean()
    denominator = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / denominator) if denominator > 0 else float("nan")


def kendall_tau_b(a: np.ndarray, b: np.ndarray) -> float:
    """τ-b = (C − D) / √((n₀ − n₁)(n₀ − n₂)) over all pairs (Kendall 1945), O(N²) in blocks."""
    n = a.size
    concordant = ties_a = ties_b = 0.0
    for start in range(0, n, 512):
        sa = np.sign(a[start : start + 512, None] - a[None, :])
        sb = np.sign(b[start : start + 512, None] - b[None, :])
        concordant += float((sa * sb).sum())
        ties_a += float((sa == 0).sum())
        ties_b += float((sb == 0).sum())
    pairs = n * (n - 1)  # ordered pairs; the diagonal is counted in the ties below
    n1 = (ties_a - n) / 1.0
    n2 = (ties_b - n) / 1.0
    denominator = np.sqrt((pairs - n1) * (pairs - n2))
    return float(concordant / denominator) if denominator > 0 else float("nan")


@dataclass(frozen=True)
class Shakeup:
    teams: int
    spearman: float
    kendall: float
    mean_abs_rank_change: float  # / N, all teams
    mean_abs_rank_change_top: float  # / N, the public top 10 %
    gap: float  # mean (public − private), positive = the public board flattered
    gap_low: float
    gap_high: float
    null_p95: float
    null_mean: float
    p_value: float  # (1 + #{null gaps ≥ gap}) / (1 + re-splits): a permutation p-value
    adaptive_overfitting: bool  # p_value ≤ 0.05: the gap beats the null's 95th percentile

    def as_dict(self) -> dict[str, float | int | bool]:
        return asdict(self)


def null_gaps(
    plans: list[Plan],
    public_mask: np.ndarray,
    *,
    greater_is_better: bool,
    resplits: int = 1000,
    seed: int = 0,
) -> np.ndarray:
    """Mean public − private gap of the teams' final submissions over random re-splits.

    ``plans`` hold each team's final submission over *all* scored rows, ``public_mask`` the
    actual split (only its size is used). Each re-split is a 0/1 count vector.
    """
    n = public_mask.size
    n_public = int(np.count_nonzero(public_mask))
    rng = np.random.default_rng(seed)
    keys = rng.random((resplits, n))
    threshold = np.partition(keys, n_public - 1, axis=1)[:, n_public - 1 : n_public]
    public = (keys <= threshold).astype(np.uint8)
    del keys
    sign = 1.0 if greater_is_better else -1.0
    gaps = np.zeros(resplits)
    pub_source, priv_source = fixed_counts(public), fixed_counts(1 - public)
    for plan in plans:
        pub = run(plan, pub_source, jackknife=False).values
        priv = run(plan, priv_source, jackknife=False).values
        gaps += sign * (pub - priv)
    return gaps / max(len(plans), 1)


def shakeup(
    public_scores: np.ndarray,
    private_scores: np.ndarray,
    *,
    greater_is_better: bool,
    null: np.ndarray,
    public_replicates: np.ndarray | None = None,
    private_replicates: np.ndarray | None = None,
    level: float = 0.95,
) -> Shakeup:
    """The report for N teams' final public and private scores (and their (N, B) replicates)."""
    pub = np.asarray(public_scores, dtype=np.float64)
    priv = np.asarray(private_scores, dtype=np.float64)
    n = pub.size
    sign = 1.0 if greater_is_better else -1.0
    rank_pub = midranks(pub, greater_is_better=greater_is_better)
    rank_priv = midranks(priv, greater_is_better=greater_is_better)
    moved = np.abs(rank_pub - rank_priv) / max(n, 1)
    top = np.argsort(rank_pub, kind="stable")[: max(1, int(np.ceil(0.1 * n)))]
    gap = float(np.mean(sign * (pub - priv))) if n else float("nan")
    low = high = float("nan")
    if public_replicates is not None and private_replicates is not None:
        per_replicate = np.nanmean(sign * (public_replicates - private_replicates), axis=0)
        alpha = (1 - level) / 2
        low, high = (float(v) for v in np.nanquantile(per_replicate, [alpha, 1 - alpha]))
    null = np.asarray(null, dtype=np.float64)
    p95 = float(np.quantile(null, 0.95))
    # The exact permutation p-value: under no adaptivity the observed split is one more
    # exchangeable draw, so flagging at p ≤ 0.05 flags at most 5 % of honest competitions.
    p_value = float((1 + np.count_nonzero(null >= gap)) / (1 + null.size))
    return Shakeup(
        teams=n,
        spearman=spearman(rank_pub, rank_priv) if n > 1 else float("nan"),
        kendall=kendall_tau_b(rank_pub, rank_priv) if n > 1 else float("nan"),
        mean_abs_rank_change=float(moved.mean()) if n else float("nan"),
        mean_abs_rank_change_top=float(moved[top].mean()) if n else float("nan"),
        gap=gap,
        gap_low=low,
        gap_high=high,
        null_p95=p95,
        null_mean=float(null.mean()),
        p_value=p_value,
        adaptive_overfitting=bool(p_value <= 0.05),
    )
