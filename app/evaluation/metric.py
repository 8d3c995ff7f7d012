"""Which metric a competition scores with: a registered one, or the organiser's own file.

A custom competition still needs a :class:`~app.metrics.Metric` for the intake to read its files
by: every target column is read as text, as many as the key has, and the organiser's ``score``
does the rest in its sandbox.
"""

from typing import Any

from pydantic import BaseModel, ConfigDict

from app.metrics import Metric, get_metric
from app.models import Competition

CUSTOM = "custom"
# The metric name of a competition whose columns an imported scoring program writes
# (app.bundles): no catalogue metric reads its files.
PROGRAM = "program"


class CustomParams(BaseModel):
    """Whatever the organiser's ``score(**params)`` takes."""

    model_config = ConfigDict(extra="allow")


def _structure_only(*_args: Any, **_kwargs: Any) -> float:
    # Reached only by the intake's self-check of a key's structure; real scores come from the
    # organiser's file, run by app.custom_metrics.sandbox.
    return 0.0


def custom_metric(direction: str = "maximize") -> Metric:
    return Metric(
        name=CUSTOM,
        score=_structure_only,
        direction=direction,  # type: ignore[arg-type]
        cell="labels",
        columns="many",
        params=CustomParams,
        reference="the organiser's score(solution, submission, row_id_column_name, **params)",
        summary="A Kaggle-style metric file uploaded by the organiser, run in a sandbox.",
    )


def program_metric(direction: str = "maximize") -> Metric:
    """What the service reads a program-scored competition by: its direction; files are the
    program's business (``cell="labels"``, ``columns="many"``: nothing is read as numbers)."""
    return Metric(
        name=PROGRAM,
        score=_structure_only,
        direction=direction,  # type: ignore[arg-type]
        cell="labels",
        columns="many",
        params=CustomParams,
        reference="the competition's imported scoring program",
        summary="Columns written by a scoring program imported with a bundle.",
    )


def is_custom(competition: Competition) -> bool:
    return competition.metric_name == CUSTOM


def is_program(competition: Competition) -> bool:
    return competition.metric_name == PROGRAM


def metric_for(competition: Competition) -> Metric:
    if is_custom(competition):
        return custom_metric(competition.custom_metric_direction or "maximize")
    if is_program(competition):
        # The ranking column's direction, kept where a custom metric keeps its own.
        return program_metric(competition.custom_metric_direction or "maximize")
    return get_metric(competition.metric_name)


def label_set(competition: Competition) -> list[str] | None:
    """The labels a single-label classification competition accepts: the host's, or else the
    live key's. None for other metrics, or before there is a key (then nothing is checked)."""
    if metric_for(competition).cell != "label":
        return None
    if competition.labels:
        return list(competition.labels)
    key = competition.board_key
    return list(key.labels) if key is not None and key.labels else None
