"""The scorer's local cache of stored files: fetched once, reused, kept within its budget."""

import os

import pytest

from app.storage.cache import LocalCache


def _fetcher(data: bytes, calls: list[str]):  # type: ignore[no-untyped-def]
    def fetch(target):  # type: ignore[no-untyped-def]
        calls.append(target.name)
        target.write_bytes(data)

    return fetch


def test_a_cached_file_is_fetched_once(tmp_path):
    cache = LocalCache(tmp_path, max_bytes=1 << 20)
    calls: list[str] = []
    first = cache.get("a.upload", _fetcher(b"0123456789", calls))
    again = cache.get("a.upload", _fetcher(b"never used", calls))
    assert first == again and again.read_bytes() == b"0123456789"
    assert len(calls) == 1


def test_the_least_recently_used_entries_go_when_the_budget_is_passed(tmp_path):
    cache = LocalCache(tmp_path, max_bytes=25)
    calls: list[str] = []
    a = cache.get("a", _fetcher(b"a" * 10, calls))
    b = cache.get("b", _fetcher(b"b" * 10, calls))
    os.utime(a, (100, 100))
    os.utime(b, (200, 200))
    cache.get("a", _fetcher(b"", calls))  # a hit: a is now the most recently used
    c = cache.get("c", _fetcher(b"c" * 10, calls))
    assert a.exists() and c.exists() and not b.exists()
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= 25


def test_the_entry_just_fetched_stays_even_past_the_budget(tmp_path):
    cache = LocalCache(tmp_path, max_bytes=5)
    big = cache.get("big", _fetcher(b"x" * 50, []))
    assert big.read_bytes() == b"x" * 50


def test_a_failed_fetch_leaves_no_entry(tmp_path):
    cache = LocalCache(tmp_path, max_bytes=1 << 20)

    def broken(target):  # type: ignore[no-untyped-def]
        target.write_bytes(b"half")
        raise ConnectionError("the store went away")

    with pytest.raises(ConnectionError):
        cache.get("a", broken)
    assert list(tmp_path.iterdir()) == []
