"""What a metric is: the pure numpy function plus what the service needs around it.

A metric function itself is pure numpy (see the family modules); its :class:`Metric` entry adds
the direction, a pydantic params model, the kind of cell the columns hold and how many target
columns it takes. This module is a leaf: the catalogue and the registry both build on it.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from app.metrics.errors import MetricParamsError

Direction = Literal["maximize", "minimize"]
# How the target cells are read: "number" as finite float64; "label" as one non-empty string;
# "labels" as a string holding a set of items (an empty cell is an empty set).
CellKind = Literal["number", "label", "labels"]
# "one": exactly one target column, arrays are 1-D; "many": one or more, arrays are (n, k).
Columns = Literal["one", "many"]


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


# score(y_true, y_pred, *, params, extra) -> float, where extra maps a key column that a param
# names (a weight column, say) to its float64 values, aligned with y_true.
ScoreFn = Callable[..., float]
DetailsFn = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Metric:
    name: str
    score: ScoreFn
    direction: Direction
    cell: CellKind
    columns: Columns = "one"
    params: type[BaseModel] = NoParams
    details: DetailsFn | None = None
    reference: str = ""
    summary: str = ""
    # Every point where a seed document or an older reference computes something else.
    differences: tuple[str, ...] = field(default_factory=tuple)
    # What the target columns hold, in words, when the generic description is not enough.
    column_help: str = ""

    @property
    def greater_is_better(self) -> bool:
        return self.direction == "maximize"

    def parse_params(self, raw: Mapping[str, Any] | None) -> BaseModel:
        try:
            return self.params.model_validate(dict(raw or {}))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'params'}: {err['msg']}"
                for err in exc.errors()
            )
            raise MetricParamsError(f"bad params for metric '{self.name}': {problems}") from exc

    def key_columns(self, params: BaseModel) -> list[str]:
        """Answer-key columns that a param names (``weight_column``, …): not targets."""
        return [
            value
            for name, value in params.model_dump().items()
            if name.endswith("_column") and isinstance(value, str) and value
        ]

    def expected_columns(self) -> str:
        if self.column_help:
            return f"id column + {self.column_help}"
        count = "one target column" if self.columns == "one" else "one or more target columns"
        kind = {
            "number": "numbers",
            "label": "a label",
            "labels": "space- or '|'-separated items",
        }[self.cell]
        return f"id column + {count} ({kind})"

    def compute(
        self,
        y_true: np.ndarray,
        y_pred: np.ndarray,
        params: BaseModel,
        extra: Mapping[str, np.ndarray] | None = None,
    ) -> float:
        return float(self.score(y_true, y_pred, params=params, extra=dict(extra or {})))
