"""Errors a metric raises on inputs it cannot score."""

import numpy as np


class MetricInputError(ValueError):
    """The inputs cannot be scored; the message is safe to show to the participant.

    ``rows`` optionally holds the positions (in the aligned arrays) of offending rows, so the
    scoring layer can name their ids. ``source`` says whose data is at fault: ``"submission"``
    (the participant's) or ``"answer_key"`` (the host's).
    """

    def __init__(
        self, message: str, *, rows: np.ndarray | None = None, source: str = "submission"
    ) -> None:
        super().__init__(message)
        self.message = message
        self.rows = rows
        self.source = source


class LabelAbsent(MetricInputError):
    """The label a per-class metric is about occurs in neither array.

    On a whole file that is the host's mistake; on a Public or Private subset it only means the
    class has no rows there, and the score is 0 (a zero division counts as 0).
    """


class UnknownMetric(LookupError):
    pass


class MetricParamsError(ValueError):
    pass
