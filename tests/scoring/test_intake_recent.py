"""The recently read predictions (app.scoring.intake_recent): a file read the same way again is
not parsed again, and nothing a caller does or a file's change can make it answer stale values."""

import os

import numpy as np
import pytest

from app.metrics import get_metric
from app.scoring.intake import IntakeError, read_answer_key, read_submission
from app.scoring.intake_recent import RECENT, RecentPredictions

KEY = "id,target\na,1\nb,0\nc,1\n"


@pytest.fixture
def counted(monkeypatch):
    """How many times the submission was really parsed."""
    import app.scoring.intake as intake

    calls: list[str] = []
    real = intake._read_submission

    def counting(path, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(str(path))
        return real(path, **kwargs)

    monkeypatch.setattr(intake, "_read_submission", counting)
    RECENT.clear()
    yield calls
    RECENT.clear()


@pytest.fixture
def key(tmp_path):
    path = tmp_path / "key.csv"
    path.write_text(KEY)
    return _key(path)


def _key(path):  # type: ignore[no-untyped-def]
    metric = get_metric("rmse")
    return read_answer_key(path, metric=metric, params=metric.parse_params(None))


def _write(path, text, *, mtime_ns=None):  # type: ignore[no-untyped-def]
    path.write_text(text)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


def test_a_file_read_again_the_same_way_is_not_parsed_again(tmp_path, key, counted):
    path = _write(tmp_path / "sub.csv", "id,target\nc,3\na,1\nb,2\n")
    first = read_submission(path, key=key, metric=get_metric("rmse"))
    again = read_submission(path, key=key, metric=get_metric("rmse"))
    assert counted == [str(path)]
    assert np.array_equal(first, again)
    assert np.array_equal(again, [1.0, 2.0, 3.0])  # aligned with the key's rows


def test_what_a_caller_changes_is_not_what_the_next_gets(tmp_path, key, counted):
    path = _write(tmp_path / "sub.csv", "id,target\na,1\nb,2\nc,3\n")
    first = read_submission(path, key=key, metric=get_metric("rmse"))
    first[:] = 99.0
    second = read_submission(path, key=key, metric=get_metric("rmse"))
    second[0] = -1.0
    assert np.array_equal(read_submission(path, key=key, metric=get_metric("rmse")), [1, 2, 3])


def test_a_changed_file_is_read_again(tmp_path, key, counted):
    path = _write(tmp_path / "sub.csv", "id,target\na,1\nb,2\nc,3\n", mtime_ns=10**18)
    read_submission(path, key=key, metric=get_metric("rmse"))
    # Same size, same mtime, other content: the inode or the mtime tells. Here the mtime.
    _write(path, "id,target\na,7\nb,8\nc,9\n", mtime_ns=10**18 + 1)
    assert np.array_equal(read_submission(path, key=key, metric=get_metric("rmse")), [7, 8, 9])
    assert len(counted) == 2


def test_another_key_table_or_metric_reads_again(tmp_path, key, counted):
    path = _write(tmp_path / "sub.csv", "id,target\na,1\nb,2\nc,3\n")
    read_submission(path, key=key, metric=get_metric("rmse"))
    other = _key(tmp_path / "key.csv")
    read_submission(path, key=other, metric=get_metric("rmse"))
    read_submission(path, key=key, metric=get_metric("mae"))
    assert len(counted) == 3


def test_a_refused_file_is_refused_every_time(tmp_path, key, counted):
    path = _write(tmp_path / "sub.csv", "id,target\na,1\nb,2\n")  # c is missing
    for _ in range(2):
        with pytest.raises(IntakeError, match="missing"):
            read_submission(path, key=key, metric=get_metric("rmse"))
    assert len(counted) == 2


def test_the_table_keeps_to_its_bounds():
    table = RecentPredictions(max_entry_bytes=80, max_total_bytes=160, max_entries=3)
    owner = object()
    reads = []

    def reader(n):  # type: ignore[no-untyped-def]
        def read():  # type: ignore[no-untyped-def]
            reads.append(n)
            return np.zeros(n)

        return read

    table.read(__file__, table=owner, variant="big", read=reader(11))  # 88 bytes: not kept
    assert len(table) == 0
    for variant in "abcd":
        table.read(__file__, table=owner, variant=variant, read=reader(10))  # 80 bytes each
    assert len(table) == 2  # the byte total holds two
    table.read(__file__, table=owner, variant="d", read=reader(10))
    assert reads.count(10) == 4  # d was kept: not read again
    table.read(__file__, table=owner, variant="a", read=reader(10))
    assert reads.count(10) == 5  # a was dropped first


def test_a_file_that_cannot_be_looked_at_goes_to_the_reader(tmp_path):
    table = RecentPredictions()
    with pytest.raises(FileNotFoundError):
        table.read(tmp_path / "gone.csv", table=object(), variant=1, read=lambda: open("/nope"))
