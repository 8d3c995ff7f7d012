"""Run a :class:`~app.honest.engine.plans.Plan` over a source of row counts, and its jackknife.

For every chunk of count vectors ``C`` (replicates × rows, uint8):

- sums: ``C @ [V, 1]`` in one BLAS product (float32 when the values are small whole numbers, so
  the sums stay exact below 2²⁴ rows; float64 otherwise);
- categories: ``C @ onehot(codes)`` for up to 64 categories, else a ``reduceat`` over the rows
  sorted by category;
- AUC: the rows sorted once by score; per replicate the cumulative count of negatives below each
  positive (a ``cumsum`` over the negatives in score order, read at each positive's
  ``searchsorted`` position), so the Mann-Whitney U of a weighted sample costs O(n) per replicate.

Chunks run on :data:`THREADS` threads (numpy's copies, products, cumulative sums and gathers
release the GIL), at most that many in flight, so memory stays a few chunks whatever the source.
The jackknife (leave one row out) gives BCa's acceleration; every plan has it in closed form.
"""

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from app.honest.engine.plans import AucPlan, CategoryPlan, Plan, SumsPlan
from app.honest.engine.resample import CountSource, Resamples

Source = Resamples | CountSource
_ONEHOT_MAX = 64
_TILE_REPLICATES = 16
_TILE_CELLS = 2**17  # 512 KB of float32 (1 MB of float64): one tile stays in cache
THREADS = 2
_GEMV_COLUMNS = 4


def _over_chunks(
    work: Callable[[np.ndarray], np.ndarray], chunks: Iterator[np.ndarray]
) -> np.ndarray:
    """``work`` on every chunk, in order, on :data:`THREADS` threads; the results concatenated.

    One chunk (a small split: most submissions) is worked here: starting a pool's threads for it
    cost more than the work (two thirds of a 100-row submission's interval time)."""
    chunks = iter(chunks)
    first = next(chunks, None)
    second = next(chunks, None) if first is not None else None
    if first is not None and second is None:
        return np.concatenate([work(first)])
    if THREADS < 2:
        return np.concatenate([work(chunk) for chunk in _prepend(first, second, chunks)])
    done: list[np.ndarray] = []
    with ThreadPoolExecutor(THREADS) as pool:
        running: deque[Future[np.ndarray]] = deque()
        for chunk in _prepend(first, second, chunks):
            running.append(pool.submit(work, chunk))
            if len(running) >= THREADS:
                done.append(running.popleft().result())
        done.extend(future.result() for future in running)
    return np.concatenate(done)


def _prepend(
    first: np.ndarray | None, second: np.ndarray | None, rest: Iterator[np.ndarray]
) -> Iterator[np.ndarray]:
    for chunk in (first, second):
        if chunk is not None:
            yield chunk
    yield from rest


@dataclass(frozen=True)
class Replicates:
    """A statistic on the full data, on each count vector of a source, and left out row by row."""

    point: float
    values: np.ndarray  # (B,), NaN where a replicate leaves the statistic undefined
    jackknife: np.ndarray  # (n,)


def run(plan: Plan, source: Source, *, jackknife: bool = True) -> Replicates:
    if isinstance(plan, SumsPlan):
        return _run_sums(plan, source, jackknife)
    if isinstance(plan, CategoryPlan):
        return _run_categories(plan, source, jackknife)
    return _run_auc(plan, source, jackknife)


def point(plan: Plan) -> float:
    if isinstance(plan, SumsPlan):
        return float(plan.stat(plan.values.sum(axis=0), np.asarray(float(plan.n))))
    if isinstance(plan, CategoryPlan):
        return float(plan.stat(np.bincount(plan.codes, minlength=plan.categories)))
    return float(np.mean([_auc_column(plan, c).point for c in range(plan.positive.shape[1])]))


# --- sums ------------------------------------------------------------------------------------


def _weighted_sums(source: Source, values: np.ndarray, integral: bool) -> np.ndarray:
    """Σ_i c_bi [V_i, 1] for every count vector b: (B, K + 1) float64.

    The product runs tile by tile (a few replicates × a few thousand rows) through one reused
    float buffer: large fresh temporaries cost more in page faults than the arithmetic. When
    every count vector sums to the same known total (resamples: n), the count column is that
    total rather than a product, and a single value column is a matrix-vector product (half
    the time of a two-column one).
    """
    exact32 = integral and source.n < 2**24
    dtype = np.float32 if exact32 else np.float64
    total = source.row_total
    columns = values.shape[1] + (total is None)
    design = np.empty((values.shape[0], columns), dtype=dtype)
    design[:, : values.shape[1]] = values
    if total is None:
        design[:, -1] = 1
    # A few columns go one matrix-vector product each over the same converted tile: faster
    # than a skinny matrix-matrix product, which this BLAS runs at half speed.
    vectors = (
        [np.ascontiguousarray(design[:, k]) for k in range(columns)]
        if columns <= _GEMV_COLUMNS
        else None
    )
    width = _TILE_CELLS // _TILE_REPLICATES
    height = _TILE_REPLICATES
    if exact32 and source.n < width:
        # Rows narrower than a tile: as many replicates as fill one, not a few hundred small
        # products (a 600-row split's sums went 16 replicates at a time). The sums are of
        # whole numbers below 2²⁴ in float32, exact in any order: the same values.
        height = _TILE_CELLS // max(source.n, 1)
        width = max(source.n, 1)

    def chunk_sums(chunk: np.ndarray) -> np.ndarray:
        buffer = np.empty((height, width), dtype=dtype)
        sums = np.empty((chunk.shape[0], values.shape[1] + 1), dtype=np.float64)
        for r0 in range(0, chunk.shape[0], height):
            rows = chunk[r0 : r0 + height]
            acc = np.zeros((rows.shape[0], columns), dtype=dtype)
            for c0 in range(0, source.n, width):
                tile = rows[:, c0 : c0 + width]
                target = buffer[: tile.shape[0], : tile.shape[1]]
                np.copyto(target, tile)
                if vectors is None:
                    acc += target @ design[c0 : c0 + width]
                else:
                    for k, vector in enumerate(vectors):
                        acc[:, k] += target @ vector[c0 : c0 + width]
            sums[r0 : r0 + rows.shape[0], :columns] = acc
        if total is not None:
            sums[:, -1] = total
        return sums

    return _over_chunks(chunk_sums, source.chunks())


def source_chunk(source: Source, bytes_per_cell: int) -> int:
    if isinstance(source, Resamples):
        return source.chunk_size(bytes_per_cell)
    return max(8, (64 * 2**20) // (bytes_per_cell * source.n))


def _run_sums(plan: SumsPlan, source: Source, jackknife: bool) -> Replicates:
    sums = _weighted_sums(source, plan.values, plan.integral)
    values = plan.stat(sums[:, :-1], sums[:, -1])
    full = plan.values.sum(axis=0)
    theta = float(plan.stat(full, np.asarray(float(plan.n))))
    jack = np.empty(0)
    if jackknife and plan.n > 1:
        jack = plan.stat(full[None, :] - plan.values, np.asarray(float(plan.n - 1)))
    return Replicates(theta, np.asarray(values, np.float64), jack)


# --- categories ------------------------------------------------------------------------------


def category_counts(source: Source, codes: np.ndarray, categories: int) -> np.ndarray:
    """counts[b, k] = Σ_{i: code_i = k} c_bi, int64 (B, K)."""
    if categories <= _ONEHOT_MAX:
        # With a known row total the most frequent category is what the others leave.
        left = int(np.argmax(np.bincount(codes, minlength=categories)))
        counted = categories if source.row_total is None else categories - 1
        columns = np.arange(categories)
        if counted < categories:
            columns = np.delete(columns, left)
        slot = np.full(categories, -1, dtype=np.intp)
        slot[columns] = np.arange(counted)
        onehot = np.zeros((codes.shape[0], counted), dtype=np.float64)
        rows = np.flatnonzero(slot[codes] >= 0)
        onehot[rows, slot[codes[rows]]] = 1
        sums = _weighted_sums(source, onehot, integral=True)
        counts: np.ndarray = np.empty((sums.shape[0], categories), dtype=np.int64)
        counts[:, columns] = np.rint(sums[:, :-1])
        if counted < categories:
            counts[:, left] = np.rint(sums[:, -1]).astype(np.int64) - counts[:, columns].sum(axis=1)
        return counts
    order = np.argsort(codes, kind="stable")
    present, starts = np.unique(codes[order], return_index=True)

    def chunk_counts(chunk: np.ndarray) -> np.ndarray:
        block = np.zeros((chunk.shape[0], categories), dtype=np.int64)
        block[:, present] = np.add.reduceat(chunk[:, order], starts, axis=1, dtype=np.int64)
        return block

    return _over_chunks(chunk_counts, source.chunks(source_chunk(source, 1)))


def _run_categories(plan: CategoryPlan, source: Source, jackknife: bool) -> Replicates:
    counts = category_counts(source, plan.codes, plan.categories)
    values = plan.stat(counts)
    full = np.bincount(plan.codes, minlength=plan.categories)
    theta = float(plan.stat(full))
    jack = np.empty(0)
    if jackknife and plan.n > 1:
        present = np.flatnonzero(full)
        left_out = np.empty(plan.categories, dtype=np.float64)
        for start in range(0, present.size, 256):
            ks = present[start : start + 256]
            table = np.repeat(full[None, :], ks.size, axis=0)
            table[np.arange(ks.size), ks] -= 1
            left_out[ks] = plan.stat(table)
        jack = left_out[plan.codes]
    return Replicates(theta, np.asarray(values, np.float64), jack)


# --- AUC -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _AucColumn:
    pos_idx: np.ndarray
    neg_order: np.ndarray  # negatives' row indices in ascending score order
    lo: np.ndarray  # per positive: negatives strictly below
    hi: np.ndarray  # per positive: negatives below or tied
    point: float
    pos_wins: np.ndarray  # per positive: negatives below + half the ties (placement × N)
    neg_losses: np.ndarray  # per negative (row order of neg_idx): positives above + half ties


def _auc_column(plan: AucPlan, column: int) -> _AucColumn:
    positive = plan.positive[:, column]
    scores = plan.scores[:, column]
    pos_idx = np.flatnonzero(positive)
    neg_idx = np.flatnonzero(~positive)
    neg_order = neg_idx[np.argsort(scores[neg_idx], kind="stable")]
    neg_sorted = scores[neg_order]
    pos_scores = scores[pos_idx]
    lo = np.searchsorted(neg_sorted, pos_scores, side="left")
    hi = np.searchsorted(neg_sorted, pos_scores, side="right")
    pos_wins = lo + 0.5 * (hi - lo)
    pos_sorted = np.sort(pos_scores)
    neg_scores = scores[neg_idx]
    below = np.searchsorted(pos_sorted, neg_scores, side="left")
    upto = np.searchsorted(pos_sorted, neg_scores, side="right")
    neg_losses = (pos_idx.size - upto) + 0.5 * (upto - below)
    n_pos, n_neg = pos_idx.size, neg_idx.size
    theta = float(pos_wins.sum() / (n_pos * n_neg)) if n_pos and n_neg else float("nan")
    return _AucColumn(pos_idx, neg_order, lo, hi, theta, pos_wins, neg_losses)


def _auc_replicates(col: _AucColumn, source: Source) -> np.ndarray:
    ties = bool(np.any(col.lo != col.hi))
    wide = source.n > 4_000_000  # 255 × 2n must fit an int32 product

    def chunk_aucs(chunk: np.ndarray) -> np.ndarray:
        negatives = np.take(chunk, col.neg_order, axis=1)
        cum = np.zeros((chunk.shape[0], negatives.shape[1] + 1), dtype=np.int32)
        np.cumsum(negatives, axis=1, dtype=np.int32, out=cum[:, 1:])
        del negatives
        positives = np.take(chunk, col.pos_idx, axis=1)
        below = np.take(cum, col.lo, axis=1)
        if ties:
            below += np.take(cum, col.hi, axis=1)
        else:
            below *= 2
        if wide:
            below = below.astype(np.int64)
        twice_wins = (positives * below).sum(axis=1, dtype=np.int64)
        n_pos = positives.sum(axis=1, dtype=np.int64)
        n_neg = cum[:, -1].astype(np.int64)
        pairs = (n_pos * n_neg).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out: np.ndarray = np.where(pairs > 0, twice_wins / (2 * pairs), np.nan)
        return out

    return _over_chunks(chunk_aucs, source.chunks(source_chunk(source, 8)))


def _run_auc(plan: AucPlan, source: Source, jackknife: bool) -> Replicates:
    columns = [_auc_column(plan, c) for c in range(plan.positive.shape[1])]
    values = np.mean([_auc_replicates(col, source) for col in columns], axis=0)
    theta = float(np.mean([col.point for col in columns]))
    jack = np.empty(0)
    if jackknife and plan.n > 1:
        jack = np.zeros(plan.n, dtype=np.float64)
        for col in columns:
            n_pos, n_neg = col.pos_idx.size, col.neg_order.size
            total = col.pos_wins.sum()
            neg_idx = np.sort(col.neg_order)
            with np.errstate(invalid="ignore", divide="ignore"):
                jack[col.pos_idx] += (total - col.pos_wins) / ((n_pos - 1) * n_neg)
                jack[neg_idx] += (total - col.neg_losses) / (n_pos * (n_neg - 1))
        jack /= len(columns)
    return Replicates(theta, values, jack)
