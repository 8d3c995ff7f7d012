"""Cells that are safe to open in a spreadsheet. A text cell starting with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return is read as a formula by Excel, LibreOffice and Google Sheets
(a team named ``=HYPERLINK(...)`` would run when a host opens the board), so it is written with a
leading ``'`` (OWASP, "CSV Injection"). Numbers stay numbers, a number written as text included.

Every CSV a person may open (the boards, the ``kaggle`` leaderboard zip) writes its rows through
:func:`safe_row`. A leaf module: it imports nothing from the app.
"""

import re
from collections.abc import Iterable
from typing import Any

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A plain decimal number, as this app writes scores ("-0.25", "1e-05"): never a formula.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def safe_cell(value: Any) -> Any:
    """``value``, with a ``'`` before a text cell that a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        if _NUMBER.fullmatch(value) is None:
            return "'" + value
    return value


def safe_row(cells: Iterable[Any]) -> list[Any]:
    return [safe_cell(cell) for cell in cells]
