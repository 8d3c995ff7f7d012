"""Pydantic models for metric params; a host's competition config is validated against these.

Every model forbids unknown keys, so a typo in a param name is an error, not a silent default.
"""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.metrics.probabilistic import KAGGLE_EPS


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Eps = Annotated[
    Literal["auto"] | Annotated[float, Field(gt=0, lt=0.5, allow_inf_nan=False)],
    Field(
        description=(
            "1e-15 (Kaggle classic): clip predictions to [eps, 1 - eps]; any number in (0, 0.5) "
            'works the same way. "auto" (scikit-learn >= 1.5): refuse values outside [0, 1], '
            "clip to machine epsilon."
        )
    ),
]
Beta = Annotated[
    float,
    Field(gt=0, allow_inf_nan=False, description="weight of recall against precision"),
]


class ClassParams(Params):
    label: Annotated[
        str,
        Field(
            min_length=1, description="the class to score; must occur in the key or the predictions"
        ),
    ]


class LogLossBinaryParams(Params):
    eps: Eps = KAGGLE_EPS


class LogLossMulticlassParams(Params):
    eps: Eps = KAGGLE_EPS
    renormalize: bool | None = Field(
        default=None,
        description=(
            "divide each clipped row by its sum; unset means true with a numeric eps "
            '(Kaggle classic) and false with "auto" (scikit-learn)'
        ),
    )


class PFBetaParams(Params):
    beta: Beta = 1.0


class WeightParams(Params):
    weight_column: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "answer-key column holding a weight per row (negative allowed; weights summing to "
            "0 are refused)"
        ),
    )


class MapAtKParams(Params):
    k: int = Field(default=10, ge=1, description="how many predictions per row count")

    @field_validator("k", mode="before")
    @classmethod
    def _not_a_bool(cls, value: object) -> object:
        if isinstance(value, bool):
            raise ValueError("k must be a whole number, not true/false")
        return value


class ColeridgeParams(Params):
    beta: Beta = 0.5
    threshold: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="lowest word Jaccard that makes a prediction match a ground truth",
    )
