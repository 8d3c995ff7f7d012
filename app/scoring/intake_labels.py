"""Label sets: the classes a single-label classification file may hold.

A competition publishes its label set; a prediction outside it is refused before it is scored,
naming the values and how many rows hold them. The check reads only the file's label column and
the public label set, never the hidden targets or their Usage split.
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from app.scoring.intake_cells import column_type, primitive
from app.scoring.intake_errors import SHOWN, IntakeError, plural
from app.scoring.intake_parse import read_table
from app.scoring.intake_source import DEFAULT_LIMITS, IntakeLimits, sniff

# A key with more distinct labels than this publishes none (and so checks none).
MAX_LABELS = 1000


def distinct_labels(values: np.ndarray) -> list[str] | None:
    """The sorted distinct labels of a key's target column, or None when there are too many."""
    labels = set(values.tolist())
    if len(labels) > MAX_LABELS:
        return None
    return sorted(str(label) for label in labels)


def parse_label_list(text: str) -> list[str]:
    """Labels given on a command line: a JSON list of strings, or a comma-separated list."""
    import json

    stripped = text.strip()
    if stripped.startswith(("[", "{")):
        try:
            parsed = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a valid JSON list: {exc.msg} at character {exc.pos}") from None
        if not isinstance(parsed, list) or not all(isinstance(v, str | int) for v in parsed):
            raise ValueError("the JSON must be a list of labels (strings)")
        labels = [str(v) for v in parsed]
    else:
        labels = [v.strip() for v in stripped.split(",")]
    labels = [v for v in labels if v != ""]
    if not labels:
        raise ValueError("no labels given")
    return list(dict.fromkeys(labels))


def describe_outside(counts: Counter[str], labels: Sequence[str]) -> str:
    """``2 value(s) outside the label set ('cat', 'dog'): 'hamster' in 1 row(s), …``."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    shown = ", ".join(f"{value!r} in {plural(n, 'row')}" for value, n in ranked[:SHOWN])
    rest = ranked[SHOWN:]
    if rest:
        shown += f", and {len(rest)} more in {plural(sum(n for _, n in rest), 'row')}"
    allowed = ", ".join(repr(label) for label in list(labels)[:20])
    if len(labels) > 20:
        allowed += f", and {len(labels) - 20} more"
    return (
        f"{plural(len(counts), 'value')} outside the label set, {plural(sum(counts.values()), 'row')} "
        f"in all: {shown}; the labels are {allowed}"
    )


def check_labels(
    path: Path,
    *,
    column: str,
    labels: Iterable[str],
    limits: IntakeLimits = DEFAULT_LIMITS,
) -> None:
    """Refuse a file whose ``column`` holds a label outside ``labels`` (empty cells are left to
    the full intake, which names them)."""
    allowed = list(labels)
    known = set(allowed)
    source = sniff(Path(path), limits=limits)
    table = read_table(source, {column: column_type("label")}, limits)
    counts: Counter[str] = Counter()
    for chunk in table.column(column).chunks:
        dictionary = chunk.dictionary.to_pylist()
        outside = [i for i, value in enumerate(dictionary) if value not in known and value != ""]
        if not outside:
            continue  # the common case: only the chunk's few distinct labels were looked at
        rows = np.bincount(primitive(chunk.indices), minlength=len(dictionary))
        for i in outside:
            if rows[i]:
                counts[dictionary[i]] += int(rows[i])
    if counts:
        raise IntakeError(
            f"column '{column}' has {describe_outside(counts, allowed)}", kind="unknown_labels"
        )
