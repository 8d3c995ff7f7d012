"""Aligning a submission's rows with the answer key by id, vectorised.

Ids are arbitrary strings. Each is hashed to 64 bits straight from Arrow's buffers (no Python
string is ever made); the answer key keeps its hashes sorted with a bucket table over their top
bits (:class:`KeyIndex`, built once and cached on disk with the key), so looking up a submission
costs a few vectorised gathers. A hash match is only a candidate: every aligned id is then compared
byte for byte with the key's, and should two different ids ever share a hash the join falls back
to Arrow's exact (slower) ``index_in``. The result is therefore always exact.
"""

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_C1 = np.uint64(0x9E3779B97F4A7C15)
_C2 = np.uint64(0xBF58476D1CE4E5B9)
_C3 = np.uint64(0x94D049BB133111EB)
_HEAD_WORDS = 4  # the first 32 bytes of an id are hashed, plus its last 8 bytes and its length


def _string_buffers(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets relative to the data buffer as int64, data bytes) of a string array."""
    if pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type):
        offset_type = np.int64
    else:
        offset_type = np.int32
    _, offsets_buf, data_buf = array.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=offset_type)[
        array.offset : array.offset + len(array) + 1
    ].astype(np.int64)
    if data_buf is None:
        data = np.zeros(0, dtype=np.uint8)
    else:
        data = np.frombuffer(data_buf, dtype=np.uint8)[: int(offsets[-1]) if len(offsets) else 0]
    return offsets, data


def hash_ids(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A 64-bit hash of every string, computed from Arrow's buffers without Python objects."""
    if isinstance(array, pa.ChunkedArray):
        parts = [hash_ids(chunk) for chunk in array.chunks]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    offsets, data = _string_buffers(array)
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    # Every byte offset viewed as the start of an unaligned little-endian uint64; 8 zero bytes of
    # padding keep the last reads inside the buffer.
    padded = np.zeros(data.size - (offsets[0] if offsets.size else 0) + 8, dtype=np.uint8)
    base = int(offsets[0]) if offsets.size else 0
    padded[: data.size - base] = data[base:]
    starts = starts - base
    words = np.ndarray((padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
    h = lengths.astype(np.uint64) * _C1
    longest = int(lengths.max()) if lengths.size else 0
    # A word is mixed in only where the id reaches it, so an id's hash never depends on the
    # lengths of the other ids it is hashed with.
    for j in range(min((longest + 7) // 8, _HEAD_WORDS)):
        _mix(h, _masked_word(words, starts + 8 * j, lengths - 8 * j), where=lengths > 8 * j)
    if longest > 8 * _HEAD_WORDS:
        long = lengths > 8 * _HEAD_WORDS
        _mix(h, words[np.where(long, starts + lengths - 8, 0)], where=long)
    # splitmix64's finaliser spreads the bits so the top ones make good bucket numbers.
    h ^= h >> np.uint64(30)
    h *= _C2
    h ^= h >> np.uint64(27)
    h *= _C3
    h ^= h >> np.uint64(31)
    return h


def _masked_word(words: np.ndarray, at: np.ndarray, remaining: np.ndarray) -> np.ndarray:
    keep = np.clip(remaining, 0, 8)
    value = words[np.minimum(at, words.size - 1)]
    drop = ((8 - keep) * 8).astype(np.uint64)  # a shift by 64 gives 0 in numpy
    return (value << drop) >> drop


def _mix(h: np.ndarray, word: np.ndarray, *, where: np.ndarray) -> None:
    mixed = h ^ word
    mixed *= _C2
    mixed ^= mixed >> np.uint64(31)
    np.copyto(h, mixed, where=where)


@dataclass
class KeyIndex:
    """The answer key's ids hashed and sorted, with a bucket table over the hashes' top bits."""

    sorted_hashes: np.ndarray  # uint64, ascending
    rows: np.ndarray  # int32/int64: key row of each sorted hash
    bucket_starts: np.ndarray  # int64 of length 2**bits + 1
    bits: int

    @classmethod
    def build(cls, ids: pa.Array | pa.ChunkedArray) -> "KeyIndex":
        h = hash_ids(ids)
        order = np.argsort(h, kind="stable")
        sorted_hashes = h[order]
        # About two buckets per three ids: most ids are then the head of their bucket.
        bits = max(int(np.ceil(np.log2(max(1.5 * len(h), 2)))), 1)
        buckets = (sorted_hashes >> np.uint64(64 - bits)).astype(np.int64)
        rows_type = np.int32 if len(h) < 2**31 else np.int64
        bucket_starts = np.zeros((1 << bits) + 1, dtype=rows_type)
        np.cumsum(np.bincount(buckets, minlength=1 << bits), out=bucket_starts[1:])
        return cls(sorted_hashes, order.astype(rows_type), bucket_starts, bits)

    def __len__(self) -> int:
        return len(self.sorted_hashes)

    def colliding_rows(self) -> np.ndarray:
        """Key rows whose hash equals another key row's (different ids, or duplicates)."""
        same = np.flatnonzero(self.sorted_hashes[1:] == self.sorted_hashes[:-1])
        return np.unique(self.rows[np.concatenate((same, same + 1))])

    def lookup(self, hashes: np.ndarray) -> np.ndarray:
        """Key row for each hash (the first one in hash order), -1 where no key id has it."""
        n = len(self.sorted_hashes)
        if n == 0:
            return np.full(len(hashes), -1, dtype=self.rows.dtype)
        bucket = (hashes >> np.uint64(64 - self.bits)).astype(np.intp)
        at = np.minimum(self.bucket_starts[bucket], n - 1).astype(np.intp, copy=False)
        # First probe for every hash at once: the head of its bucket. An empty bucket's head is
        # a later bucket's first hash (or the last one), which has other top bits: no false hit.
        candidate = self.sorted_hashes[at]
        hit = candidate == hashes
        found = np.where(hit, self.rows[at], -1).astype(self.rows.dtype, copy=False)
        # The hashes ascend, so a probe walks on only while it sees smaller ones; past a bucket's
        # end they are larger, which ends the walk without looking the bucket's end up.
        todo = np.flatnonzero((candidate < hashes) & (at + 1 < n))
        at = at[todo] + 1
        while todo.size:
            candidate = self.sorted_hashes[at]
            wanted = hashes[todo]
            hit = candidate == wanted
            found[todo[hit]] = self.rows[at[hit]]
            go_on = (candidate < wanted) & (at + 1 < n)
            todo = todo[go_on]
            at = at[go_on] + 1
        return found


def positions_exact(sub_ids: pa.Array | pa.ChunkedArray, key_ids: pa.Array) -> np.ndarray:
    """Key row of each submission id, -1 where absent: Arrow's hash join, exact but slower."""
    found = pc.index_in(sub_ids, value_set=key_ids)
    if isinstance(found, pa.ChunkedArray):
        found = found.combine_chunks()
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def arrow_indices(values: np.ndarray) -> pa.Array:
    """An int64 numpy array as an Arrow array, zero-copy (``pa.array`` would import pandas)."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def _verified(chunk: pa.Array, key_ids: pa.Array, found: np.ndarray) -> bool:
    """Whether every matched submission id equals, byte for byte, the key id it was matched to."""
    matched = found >= 0
    if not matched.all():
        rows = np.flatnonzero(matched)
        chunk = chunk.take(arrow_indices(rows))
        found = found[rows]
    return key_ids.take(arrow_indices(found)).equals(chunk)


# Rows joined at a time: bounds the temporaries of a 10M-row join to a few tens of MB.
_JOIN_ROWS = 1 << 19


def positions(
    sub_ids: pa.Array | pa.ChunkedArray, key_ids: pa.Array, index: KeyIndex
) -> np.ndarray:
    """Key row of each submission id, -1 where it is not in the key; exact."""
    if isinstance(sub_ids, pa.Array):
        sub_ids = pa.chunked_array([sub_ids], type=sub_ids.type)
    found = np.empty(len(sub_ids), dtype=index.rows.dtype)
    start = 0
    for chunk in sub_ids.chunks:
        for offset in range(0, len(chunk), _JOIN_ROWS):
            piece = chunk.slice(offset, _JOIN_ROWS)
            part = index.lookup(hash_ids(piece))
            if not _verified(piece, key_ids, part):
                # Two different ids share a hash: rare, and then Arrow's exact join decides.
                return positions_exact(sub_ids, key_ids)
            found[start : start + len(piece)] = part
            start += len(piece)
    return found


def in_key_order(sub_ids: pa.Array | pa.ChunkedArray, key_ids: pa.Array) -> bool:
    """The fast path: the submission lists exactly the key's ids, in the key's order."""
    if len(sub_ids) != len(key_ids):
        return False
    if isinstance(sub_ids, pa.Array):
        return sub_ids.equals(key_ids)
    start = 0
    for chunk in sub_ids.chunks:
        if not chunk.equals(key_ids.slice(start, len(chunk))):
            return False
        start += len(chunk)
    return True
