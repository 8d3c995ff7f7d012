"""One seeded set of bootstrap resamples per answer-key version and split.

A resample is a vector of counts over the key's rows (multinomial: ``n`` draws with replacement,
counted with ``bincount``), so any statistic that is a weighted sum over rows is a matrix product
with the count matrix. Replicates are generated in blocks of :data:`BLOCK`, each from its own
child of one ``SeedSequence``: replicate ``b`` depends only on (seed, b, n), whatever the chunking
or the number of threads, so every submission scored against a key version sees the very same
resamples and an interval is reproducible from the key's sha alone.
"""

import hashlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

BLOCK = 8
DEFAULT_REPLICATES = 1000
# Chunks of replicates are sized so one chunk of float32 values stays near this many bytes.
CHUNK_BYTES = 64 * 2**20
# Count matrices up to this many cells (64 MB) are kept after their first use.
CACHE_CELLS = 2**26


def seed_for(key_id: str, split: str = "all") -> int:
    """A 64-bit seed from a key version's id or sha and the split's name."""
    digest = hashlib.sha256(f"podium-bootstrap:{key_id}:{split}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


# Large resamples are counted bucket by bucket: 2¹⁶ rows, one 16-bit draw per row drawn.
BUCKET_BITS = 16
BUCKET = 1 << BUCKET_BITS
# Blocks up to this many cells draw all their rows' indices at once (the small-key path).
SMALL_CELLS = 2**16


def _fill_row(rng: np.random.Generator, n: int, out: np.ndarray) -> None:
    """One multinomial(n, 1/n) count vector into ``out`` ((n,) uint8), bucket by bucket.

    The n draws are first shared among buckets of :data:`BUCKET` rows (one multinomial over
    the buckets, by size), then each bucket's share is drawn uniformly inside it and counted
    with a ``bincount`` that stays in cache: the same distribution as n draws over all rows,
    three to four times faster than counting draws scattered over a megabyte-long row. Inside
    the full buckets a draw is 16 raw bits of the generator (four per 64-bit word, exactly
    uniform); the last, partial bucket draws with ``integers``.
    """
    full, last = divmod(n, BUCKET)
    if full == 0:
        out[:] = np.bincount(rng.integers(0, n, size=n, dtype=np.int64), minlength=n)
        return
    sizes = np.full(full + (last > 0), BUCKET, dtype=np.float64)
    if last:
        sizes[-1] = last
    totals = rng.multinomial(n, sizes / n)
    drawn = int(totals[:full].sum())
    raw = rng.bit_generator.random_raw((drawn + 3) // 4)
    # Little-endian words read as 16-bit draws, low bits first, on any machine.
    draws = raw.astype("<u8", copy=False).view("<u2")
    start = 0
    for bucket in range(full):
        stop = start + int(totals[bucket])
        rows = slice(bucket * BUCKET, (bucket + 1) * BUCKET)
        out[rows] = np.bincount(draws[start:stop], minlength=BUCKET)
        start = stop
    if last:
        tail = rng.integers(0, last, size=int(totals[full]), dtype=np.int64)
        out[full * BUCKET :] = np.bincount(tail, minlength=last)


def _fill_block(seed: int, block: int, n: int, out: np.ndarray) -> None:
    """Block ``block``'s count vectors, into ``out`` ((size, n) uint8).

    The block draws from child ``block`` of the seed's ``SeedSequence``: a small block as one
    ``integers`` draw of size × n (row r's indices offset by r·n) counted by one ``bincount``,
    a larger one row after row by :func:`_fill_row`. Counts are stored mod 256 (a count past
    255 in a multinomial(n, 1/n) has probability below 10⁻⁴⁰⁰).
    """
    size = out.shape[0]
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(block,))))
    if n * size <= SMALL_CELLS:
        idx = rng.integers(0, n, size=(size, n), dtype=np.int64)
        idx += np.arange(size, dtype=np.int64)[:, None] * n
        out[:] = np.bincount(idx.ravel(), minlength=size * n).reshape(size, n)
        return
    for row in range(size):
        _fill_row(rng, n, out[row])


@dataclass
class Resamples:
    """``replicates`` multinomial resamples of ``n`` rows, generated on demand or materialised.

    ``materialise()`` keeps the whole ``(replicates, n)`` uint8 count matrix (1 GB at 1M rows and
    1000 replicates): the per-key part that later submissions reuse. Matrices up to
    :data:`CACHE_CELLS` are kept after their first use anyway.
    """

    n: int
    seed: int
    replicates: int = DEFAULT_REPLICATES
    threads: int = 2
    _counts: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("resamples need at least one row")
        if self.replicates < 2:
            raise ValueError("resamples need at least two replicates")

    @property
    def row_total(self) -> int:
        """Every resample draws exactly ``n`` rows: the count column of a product is known."""
        return self.n

    @property
    def materialised(self) -> bool:
        return self._counts is not None

    def chunk_size(self, bytes_per_cell: int = 4) -> int:
        rows = max(1, CHUNK_BYTES // (bytes_per_cell * self.n))
        return max(BLOCK, rows - rows % BLOCK)

    def _generate(self, start: int, stop: int) -> np.ndarray:
        first, last = start // BLOCK, (stop + BLOCK - 1) // BLOCK
        out = np.empty(((last - first) * BLOCK, self.n), dtype=np.uint8)

        def fill(block: int) -> None:
            size = min(BLOCK, self.replicates - block * BLOCK)
            row = (block - first) * BLOCK
            _fill_block(self.seed, block, self.n, out[row : row + size])

        blocks = range(first, last)
        if self.threads > 1 and self.n * (stop - start) > 2**22 and len(blocks) > 1:
            # numpy's generators release the GIL while they draw.
            with ThreadPoolExecutor(self.threads) as pool:
                list(pool.map(fill, blocks))
        else:
            for block in blocks:
                fill(block)
        offset = start - first * BLOCK
        if offset == 0 and stop - start == out.shape[0]:
            return out
        return out[offset : offset + (stop - start)]

    def counts(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        stop = self.replicates if stop is None else stop
        if self._counts is not None:
            return self._counts[start:stop]
        return self._generate(start, stop)

    def materialise(self) -> "Resamples":
        if self._counts is None:
            self._counts = self._generate(0, self.replicates)
        return self

    def write(self, path: Path) -> None:
        """The count matrix into ``path`` (row-major uint8, replicate after replicate), a chunk
        at a time: a matrix too large to keep in memory is generated once per machine."""
        with open(path, "wb") as out:
            for start in range(0, self.replicates, self.chunk_size(1)):
                self.counts(start, min(start + self.chunk_size(1), self.replicates)).tofile(out)

    def read_from(self, path: Path) -> "Resamples":
        """Use the matrix :meth:`write` put in ``path``, mapped: chunks are read as they are
        needed, by the threads that need them, and the page cache keeps them between jobs."""
        size = Path(path).stat().st_size
        if size != self.n * self.replicates:
            raise ValueError(f"{path} holds {size} bytes, not {self.n} × {self.replicates}")
        self._counts = np.memmap(path, dtype=np.uint8, mode="r", shape=(self.replicates, self.n))
        return self

    def chunks(self, size: int | None = None) -> Iterator[np.ndarray]:
        """The count matrix in consecutive blocks of replicates (rows), ``(chunk, n)`` uint8."""
        size = size or self.chunk_size()
        if self._counts is None and self.n * self.replicates <= CACHE_CELLS:
            self._counts = self._generate(0, self.replicates)
        for start in range(0, self.replicates, size):
            yield self.counts(start, min(start + size, self.replicates))


def fixed_counts(counts: np.ndarray) -> "CountSource":
    """Any given ``(m, n)`` count matrix (the shake-up's public/private re-splits) as a source."""
    return CountSource(np.ascontiguousarray(counts, dtype=np.uint8))


@dataclass
class CountSource:
    """A plain count matrix with the same ``chunks`` interface as :class:`Resamples`."""

    matrix: np.ndarray

    @property
    def n(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def replicates(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def row_total(self) -> None:
        """Rows of a given matrix may sum to anything: products count them."""
        return None

    def chunks(self, size: int | None = None) -> Iterator[np.ndarray]:
        size = size or max(BLOCK, CHUNK_BYTES // (4 * self.n))
        for start in range(0, self.replicates, size):
            yield self.matrix[start : start + size]
