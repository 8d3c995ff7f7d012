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


class UnknownMetric(LookupError):
    pass


class MetricParamsError(ValueError):
    pass
