"""What precision a caller sees: a competition's hosts every digit, everyone else each number
derived from a score (the score, its interval, a comparison, a chart's points, a CSV's cells)
rounded to the competition's ``score_decimals``. Full precision would let a participant read
more of the hidden split from the board than the host chose to publish."""

from collections.abc import Mapping
from typing import Any, overload

from app.models import Competition

# An interval's fields that are not scores: its coverage and how many replicates it took.
_NOT_SCORES = frozenset({"level", "replicates"})


def shown_decimals(competition: Competition, *, host: bool) -> int | None:
    """The decimals a caller sees: None (every digit) for a host."""
    return None if host else competition.score_decimals


@overload
def rounded(value: float, decimals: int | None) -> float: ...
@overload
def rounded(value: None, decimals: int | None) -> None: ...
def rounded(value: float | None, decimals: int | None) -> float | None:
    return value if value is None or decimals is None else round(value, decimals)


def rounded_interval(
    interval: Mapping[str, Any] | None, decimals: int | None
) -> dict[str, Any] | None:
    """An interval (``low``, ``high``, ``se``, ...) with its score-valued fields rounded."""
    if interval is None:
        return None
    return {
        name: value
        if name in _NOT_SCORES or not isinstance(value, float)
        else rounded(value, decimals)
        for name, value in interval.items()
    }
