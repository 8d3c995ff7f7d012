"""The answer key and a submission as the pandas DataFrames a Kaggle-style ``score`` receives.

Runs inside the sandboxed child, so it imports pandas and nothing from the server. Cells are read
literally (``NA``, ``None`` and empty cells stay strings) and ids are always strings. Problems with
the submission raise :class:`SubmissionRejected`, whose message the participant sees; problems with
the answer key raise :class:`AnswerKeyRejected`, for the host only.
"""

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

# The same conventions as app.scoring.intake, repeated so the child does not import the server.
USAGE_COLUMN = "Usage"
PUBLIC, PRIVATE, IGNORED = "Public", "Private", "Ignored"
SHOWN = 5  # how many offending ids a message names
_LONGEST_SHOWN = 40  # ids are participant data: cut long ones so messages stay readable


class SubmissionRejected(ValueError):
    """The submission does not match the answer key; the message is meant for the participant."""


class AnswerKeyRejected(ValueError):
    """The answer key cannot be used; the message is meant for the host."""


@dataclass
class Inputs:
    """The key's rows (``Usage`` removed) and the submission's, in the same order, index 0..n-1."""

    id_column: str
    target_columns: list[str]
    solution: pd.DataFrame
    submission: pd.DataFrame
    usage: np.ndarray | None  # the key's Usage labels, or None when it has no Usage column

    def parts(self) -> dict[str, np.ndarray | None]:
        """Row masks for the score, public and private calls (None: every row; missing: no rows)."""
        if self.usage is None:
            return {"score": None}
        masks = {
            "score": self.usage != IGNORED,
            "public": self.usage == PUBLIC,
            "private": self.usage == PRIVATE,
        }
        return {name: mask for name, mask in masks.items() if mask.any()}

    def frames(self, mask: np.ndarray | None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Fresh copies for one call: Kaggle metrics often ``del solution[row_id_column_name]``."""
        if mask is None:
            return self.solution.copy(), self.submission.copy()
        return (
            self.solution[mask].reset_index(drop=True),
            self.submission[mask].reset_index(drop=True),
        )


def first_few(values: list | np.ndarray) -> str:
    values = list(values)
    cut = _LONGEST_SHOWN - 1
    shown = [v if len(v) <= _LONGEST_SHOWN else v[:cut] + "…" for v in values[:SHOWN]]
    more = len(values) - len(shown)
    return ", ".join(repr(v) for v in shown) + (f" (and {more} more)" if more > 0 else "")


def _compression(path: Path) -> str | None:
    # Stored uploads carry no file extension: tell .csv.gz and .zip by content, as the intake does.
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic[:2] == b"\x1f\x8b":
        return "gzip"
    if magic == b"PK\x03\x04":
        return "zip"
    return None


def _header(path: Path) -> list[str]:
    compression = _compression(path)
    if compression is None:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            return next(csv.reader(fh), [])
    first = pd.read_csv(
        path, compression=compression, nrows=0, encoding="utf-8-sig", keep_default_na=False
    )
    return [str(c) for c in first.columns]


def _read(path: Path, columns: list[str], text_columns: list[str]) -> pd.DataFrame:
    return pd.read_csv(
        path,
        dtype={c: str for c in text_columns},
        keep_default_na=False,
        encoding="utf-8-sig",
        compression=_compression(path),
    )[columns]


def read_answer_key(
    path: Path, *, id_column: str | None, solution_only_columns: list[str]
) -> tuple[pd.DataFrame, str, list[str], np.ndarray | None]:
    """The key without ``Usage``, its id column, its target columns and its Usage labels."""
    try:
        header = _header(path)
        id_col = id_column or (header[0] if header else "")
        _check_header(header, who="answer key", reject=AnswerKeyRejected)
        if id_col not in header:
            raise AnswerKeyRejected(f"the answer key has no id column '{id_col}'")
        missing = [c for c in solution_only_columns if c not in header]
        if missing:
            raise AnswerKeyRejected(f"the answer key lacks column(s) {first_few(missing)}")
        text = [id_col] + ([USAGE_COLUMN] if USAGE_COLUMN in header else [])
        table = _read(path, header, text)
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise AnswerKeyRejected(f"the answer key could not be read as CSV: {exc}") from None
    reserved = {id_col, USAGE_COLUMN, *solution_only_columns}
    targets = [c for c in header if c not in reserved]
    if not targets:
        raise AnswerKeyRejected("the answer key has no target column")
    if table.empty:
        raise AnswerKeyRejected("the answer key has a header but no data rows")
    ids = table[id_col]
    repeated = ids[ids.duplicated()].unique()
    if len(repeated):
        raise AnswerKeyRejected(
            f"the answer key has {len(repeated)} duplicate id(s): {first_few(repeated)}"
        )
    usage = None
    if USAGE_COLUMN in header:
        usage = table.pop(USAGE_COLUMN).to_numpy(dtype=object)
        bad = ~np.isin(usage, [PUBLIC, PRIVATE, IGNORED])
        if bad.any():
            raise AnswerKeyRejected(
                f"the Usage column must hold Public, Private or Ignored; {int(bad.sum())} row(s) "
                f"do not, for id(s) {first_few(ids[bad].tolist())}"
            )
        if (usage == IGNORED).all():
            raise AnswerKeyRejected("every row of the answer key is Ignored")
    return table, id_col, targets, usage


def _check_header(header: list[str], *, who: str, reject: type[ValueError]) -> None:
    if not header:
        raise reject(f"the {who} is empty")
    if any(not name.strip() for name in header):
        raise reject(f"the {who} header has an empty column name")
    repeated = sorted(name for name, n in Counter(header).items() if n > 1)
    if repeated:
        raise reject(f"the {who} header repeats column(s) {first_few(repeated)}")


def read_submission(path: Path, *, id_column: str, target_columns: list[str]) -> pd.DataFrame:
    """The submission with exactly the id and target columns, in the key's column order."""
    expected = [id_column, *target_columns]
    try:
        header = _header(path)
        _check_header(header, who="submission", reject=SubmissionRejected)
        missing = [c for c in expected if c not in header]
        extra = [c for c in header if c not in expected]
        if missing or extra:
            problems = []
            if missing:
                problems.append(f"missing column(s) {first_few(missing)}")
            if extra:
                problems.append(f"unexpected column(s) {first_few(extra)}")
            raise SubmissionRejected(
                f"{' and '.join(problems)}; expected exactly {', '.join(expected)}"
            )
        return _read(path, expected, [id_column])
    except UnicodeDecodeError:
        raise SubmissionRejected("the submission is not valid UTF-8 text") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else "unknown error"
        raise SubmissionRejected(f"the submission could not be read as CSV: {reason}") from None


def align(submission: pd.DataFrame, key_ids: pd.Series, id_column: str) -> pd.DataFrame:
    """The submission's rows in the key's order; unknown, repeated or missing ids are rejected."""
    sub_ids = submission[id_column]
    position = pd.Index(key_ids).get_indexer(sub_ids)
    unknown = np.flatnonzero(position < 0)
    if unknown.size:
        raise SubmissionRejected(
            f"{unknown.size} id(s) are not in the answer key: "
            f"{first_few(sub_ids.iloc[unknown[:SHOWN]].tolist())}"
        )
    counts = np.bincount(position, minlength=len(key_ids))
    repeated = np.flatnonzero(counts > 1)
    if repeated.size:
        raise SubmissionRejected(
            f"{repeated.size} id(s) appear more than once: "
            f"{first_few(key_ids.iloc[repeated[:SHOWN]].tolist())}"
        )
    missing = np.flatnonzero(counts == 0)
    if missing.size:
        raise SubmissionRejected(
            f"{missing.size} id(s) of the answer key are missing: "
            f"{first_few(key_ids.iloc[missing[:SHOWN]].tolist())}"
        )
    order = np.empty(len(key_ids), dtype=np.int64)
    order[position] = np.arange(len(position))
    return submission.iloc[order].reset_index(drop=True)


def load_inputs(
    *,
    answer_key: Path,
    submission: Path | None,
    id_column: str | None,
    solution_only_columns: list[str],
) -> Inputs:
    """Read both files, check the submission against the key and order it like the key.

    Without a submission the key's own id and target columns stand in for it, which proves at
    upload time that the metric can score the key.
    """
    solution, id_col, targets, usage = read_answer_key(
        answer_key, id_column=id_column, solution_only_columns=solution_only_columns
    )
    if submission is None:
        aligned = solution[[id_col, *targets]]
    else:
        table = read_submission(submission, id_column=id_col, target_columns=targets)
        aligned = align(table, solution[id_col], id_col)
    return Inputs(
        id_column=id_col,
        target_columns=targets,
        solution=solution.reset_index(drop=True),
        submission=aligned.reset_index(drop=True),
        usage=usage,
    )
