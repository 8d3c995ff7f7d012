"""The stats job's shared resamples: small matrices kept in memory, large ones drawn for the first
submission, written behind it once per machine to the resample cache and mapped by every later
submission."""

import numpy as np
import pytest

from app.config import Settings
from app.honest.engine.resample import Resamples, seed_for
from app.jobs import honest as stats_jobs


@pytest.fixture
def settings(tmp_path):
    return Settings(database_url=f"sqlite:///{tmp_path}/db.sqlite", data_dir=tmp_path / "data")


@pytest.fixture(autouse=True)
def _empty_memory_cache(monkeypatch):
    monkeypatch.setattr(stats_jobs, "_cache", type(stats_jobs._cache)())


def _expected(key: str, split: str, n: int) -> np.ndarray:
    return Resamples(n, seed=seed_for(key, split), replicates=stats_jobs.REPLICATES).counts()


def test_small_resamples_stay_in_memory(settings):
    first = stats_jobs.resamples_for("sha-a", "public", 500, settings)
    assert first.materialised
    assert stats_jobs.resamples_for("sha-a", "public", 500, settings) is first
    assert not (settings.data_dir / "resample-cache").exists()
    assert np.array_equal(first.counts(), _expected("sha-a", "public", 500))


def test_large_resamples_are_written_once_and_mapped(settings, monkeypatch):
    # 3,000 rows × 1,000 replicates is past this budget's half: the matrix goes to disk.
    monkeypatch.setattr(stats_jobs, "_CACHE_BYTES", 4_000_000)
    writes = []
    real_write = Resamples.write

    def counting_write(self, path):
        writes.append(path)
        real_write(self, path)

    monkeypatch.setattr(Resamples, "write", counting_write)
    first = stats_jobs.resamples_for("sha-b", "private", 3000, settings)
    assert not isinstance(first.counts(), np.memmap)  # the first submission: drawn in memory
    stats_jobs.wait_for_writes()
    again = stats_jobs.resamples_for("sha-b", "private", 3000, settings)
    assert len(writes) == 1
    [entry] = list((settings.data_dir / "resample-cache").iterdir())
    assert entry.stat().st_size == 3000 * stats_jobs.REPLICATES
    assert isinstance(again.counts(), np.memmap)
    expected = _expected("sha-b", "private", 3000)
    assert np.array_equal(first.counts(), expected)
    assert np.array_equal(np.concatenate(list(again.chunks(size=96))), expected)
    # Another split, another entry; an entry of the wrong size is refused, not misread.
    stats_jobs.resamples_for("sha-b", "public", 3000, settings)
    stats_jobs.wait_for_writes()
    assert len(writes) == 2
    # A write still going on is waited for, not started again.
    stats_jobs.resamples_for("sha-b", "other", 3000, settings)
    stats_jobs.resamples_for("sha-b", "other", 3000, settings)
    stats_jobs.wait_for_writes()
    assert len(writes) == 3
    with pytest.raises(ValueError, match="not 2999"):
        Resamples(2999, seed=1, replicates=stats_jobs.REPLICATES).read_from(entry)


def test_an_evicted_entry_is_written_again(settings, monkeypatch):
    monkeypatch.setattr(stats_jobs, "_CACHE_BYTES", 4_000_000)
    stats_jobs.resamples_for("sha-c", "public", 3000, settings)
    stats_jobs.wait_for_writes()
    for entry in (settings.data_dir / "resample-cache").iterdir():
        entry.unlink()
    again = stats_jobs.resamples_for("sha-c", "public", 3000, settings)
    assert np.array_equal(again.counts(), _expected("sha-c", "public", 3000))
    stats_jobs.wait_for_writes()
    assert len(list((settings.data_dir / "resample-cache").iterdir())) == 1


def test_a_full_disk_costs_only_the_cache(settings, monkeypatch):
    monkeypatch.setattr(stats_jobs, "_CACHE_BYTES", 4_000_000)

    def no_space(self, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Resamples, "write", no_space)
    first = stats_jobs.resamples_for("sha-d", "public", 3000, settings)
    stats_jobs.wait_for_writes()
    assert np.array_equal(first.counts(), _expected("sha-d", "public", 3000))
    assert list((settings.data_dir / "resample-cache").iterdir()) == []
