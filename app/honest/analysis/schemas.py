from pydantic import BaseModel


class SplitComparison(BaseModel):
    split: str  # "public" or "private"
    a_score: float
    b_score: float
    difference: float  # oriented: positive means A is better, whatever the metric's direction
    low: float  # paired percentile 95 % interval of the difference
    high: float
    se: float
    p_value: float  # one-sided, H0: A is no better than B
    replicates: int


class ComparisonPublic(BaseModel):
    a: int
    b: int
    metric: str
    direction: str
    answer_key_version: int
    comparisons: list[SplitComparison]


class ShakeupPublic(BaseModel):
    metric: str
    direction: str
    answer_key_version: int
    teams: int
    spearman: float | None
    kendall: float | None
    mean_abs_rank_change: float | None  # |public rank - private rank| / N, all teams
    mean_abs_rank_change_top: float | None  # the same over the public top 10 %
    gap: float | None  # mean (public - private) of the final submissions, positive = flattered
    gap_low: float | None
    gap_high: float | None
    null_p95: float | None  # over 1000 random public/private re-splits
    null_mean: float | None
    p_value: float | None
    adaptive_overfitting: bool | None  # None: the metric has no resampling plan
    rows: list[dict[str, str | int | float | None]]  # team, public/private rank and score
