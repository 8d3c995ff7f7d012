"""Aligning a submission's rows with the answer key by id, vectorised.

Ids are arbitrary strings. Each is hashed to 64 bits straight from Arrow's buffers (no Python
string is ever made); the answer key keeps its hashes grouped in buckets by their top bits
(:class:`KeyIndex`, built once and cached on disk with the key), so looking up a submission
costs a few vectorised gathers. A hash match is only a candidate: every aligned id is then compared
byte for byte with the key's, and should two different ids ever share a hash the join falls back
to Arrow's exact (slower) ``index_in``. The result is therefore always exact.
"""

from dataclasses import dataclass
from typing import Any

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
        offset_type: type[np.signedinteger[Any]] = np.int64
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


_HASH_ROWS = 1 << 19  # ids hashed at a time, to bound the temporaries
_MAX_BUCKET = 64  # a fuller bucket means the ids defeat the hash


def hash_ids(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A 64-bit hash of every string, computed from Arrow's buffers without Python objects."""
    chunks = array.chunks if isinstance(array, pa.ChunkedArray) else [array]
    out = np.empty(len(array), dtype=np.uint64)
    start = 0
    for chunk in chunks:
        for offset in range(0, len(chunk), _HASH_ROWS):
            piece = chunk.slice(offset, _HASH_ROWS)
            out[start : start + len(piece)] = _hash_piece(piece)
            start += len(piece)
    return out


def _hash_piece(array: pa.Array) -> np.ndarray:
    offsets, data = _string_buffers(array)
    base = int(offsets[0]) if offsets.size else 0
    starts = offsets[:-1] - base
    lengths = offsets[1:] - offsets[:-1]
    data = data[base:]
    h = lengths.astype(np.uint64) * _C1
    longest = int(lengths.max()) if lengths.size else 0
    if longest and int(lengths.min()) == longest:
        _mix_fixed_width(h, data, longest)
    else:
        _mix_any_width(h, data, starts, lengths, longest)
    # splitmix64's finaliser spreads the bits so the top ones make good bucket numbers.
    h ^= h >> np.uint64(30)
    h *= _C2
    h ^= h >> np.uint64(27)
    h *= _C3
    h ^= h >> np.uint64(31)
    return np.asarray(h)


def _mix_fixed_width(h: np.ndarray, data: np.ndarray, width: int) -> None:
    """Ids of one length (hex, uuids, zero-padded numbers): word j of every id is a strided,
    unaligned uint64 view of the data, so nothing is gathered or copied row by row."""
    n = len(h)
    padded = np.zeros(n * width + 8, dtype=np.uint8)  # 8 spare bytes for the last id's reads
    padded[: n * width] = data[: n * width]

    def word(at: int) -> np.ndarray:
        return np.ndarray((n,), dtype="<u8", buffer=padded, offset=at, strides=(width,))

    for j in range(min((width + 7) // 8, _HEAD_WORDS)):
        remaining = width - 8 * j
        value = word(8 * j)
        if remaining < 8:  # zero the bytes past the id's end, as the any-width path does
            value = value & np.uint64((1 << (8 * remaining)) - 1)
        _mix(h, value)
    if width > 8 * _HEAD_WORDS:
        _mix(h, word(width - 8))


def _mix_any_width(
    h: np.ndarray, data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, longest: int
) -> None:
    # Every byte offset viewed as the start of an unaligned little-endian uint64; 8 zero bytes
    # of padding keep the last reads inside the buffer.
    padded = np.zeros(data.size + 8, dtype=np.uint8)
    padded[: data.size] = data
    words = np.ndarray((padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
    # A word is mixed in only where the id reaches it, so an id's hash never depends on the
    # lengths of the other ids it is hashed with.
    for j in range(min((longest + 7) // 8, _HEAD_WORDS)):
        _mix(h, _masked_word(words, starts + 8 * j, lengths - 8 * j), where=lengths > 8 * j)
    if longest > 8 * _HEAD_WORDS:
        long = lengths > 8 * _HEAD_WORDS
        _mix(h, words[np.where(long, starts + lengths - 8, 0)], where=long)


def _masked_word(words: np.ndarray, at: np.ndarray, remaining: np.ndarray) -> np.ndarray:
    keep = np.clip(remaining, 0, 8)
    value = words[np.minimum(at, words.size - 1)]
    drop = ((8 - keep) * 8).astype(np.uint64)  # a shift by 64 gives 0 in numpy
    return np.asarray((value << drop) >> drop)


def _mix(h: np.ndarray, word: np.ndarray, *, where: np.ndarray | None = None) -> None:
    if where is None:
        h ^= word
        h *= _C2
        h ^= h >> np.uint64(31)
        return
    mixed = h ^ word
    mixed *= _C2
    mixed ^= mixed >> np.uint64(31)
    np.copyto(h, mixed, where=where)


@dataclass
class KeyIndex:
    """The answer key's id hashes grouped into buckets by their top bits, like a hash table.

    ``hashes[bucket_starts[b]:bucket_starts[b + 1]]`` are the hashes whose top ``bits`` bits
    are ``b`` (in key-row order), and ``rows`` the key row of each. Grouping is a two-pass radix
    sort on the bucket numbers, a few times faster than sorting the hashes themselves.
    """

    hashes: np.ndarray  # uint64, grouped by bucket
    rows: np.ndarray  # int32 (int64 past 2**31 rows): the key row of each grouped hash
    bucket_starts: np.ndarray  # same type as rows, length 2**bits + 1
    bits: int
    id_width: int = 0  # the byte length every key id has, or 0 when they differ

    @classmethod
    def build(cls, ids: pa.Array | pa.ChunkedArray) -> "KeyIndex":
        h = hash_ids(ids)
        # About two buckets per three ids: most ids are then alone in their bucket.
        bits = min(max(int(np.ceil(np.log2(max(1.5 * len(h), 2)))), 1), 32)
        buckets = (h >> np.uint64(64 - bits)).astype(np.uint32)
        rows_type = np.int32 if len(h) < 2**31 else np.int64
        bucket_starts = np.zeros((1 << bits) + 1, dtype=rows_type)
        # Counted before the sort: the counts (int64, one per bucket) and the sort's temporaries
        # are then never held at once, which bounds the peak of a large key's index.
        np.cumsum(np.bincount(buckets, minlength=1 << bits), out=bucket_starts[1:])
        order = np.argsort((buckets & 0xFFFF).astype(np.uint16), kind="stable")  # radix sort
        if bits > 16:
            high = (buckets[order] >> np.uint32(16)).astype(np.uint16)
            del buckets
            order = order[np.argsort(high, kind="stable")]
            del high
        else:
            del buckets
        hashes = h[order]
        del h
        rows = order.astype(rows_type)
        del order
        width = _fixed_width(ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids)
        return cls(hashes, rows, bucket_starts, bits, width)

    def __len__(self) -> int:
        return len(self.hashes)

    @property
    def usable(self) -> bool:
        """False when ids crowd into a few buckets (long ids alike in their hashed bytes):
        probing would then cost rows × bucket size, and the exact join is used instead."""
        if len(self.hashes) == 0:
            return True
        return int(np.max(np.diff(self.bucket_starts))) <= _MAX_BUCKET

    def colliding_rows(self) -> np.ndarray:
        """Key rows whose hash equals another key row's (different ids, or duplicates)."""
        if not self.usable:
            return np.asarray(self.rows)
        first = self.lookup(self.hashes)
        clash = np.flatnonzero(first != self.rows)
        return np.unique(np.concatenate((self.rows[clash], first[clash])))

    def lookup(self, hashes: np.ndarray) -> np.ndarray:
        """Key row for each hash (the first in its bucket), -1 where no key id has it."""
        n = len(self.hashes)
        if n == 0:
            return np.full(len(hashes), -1, dtype=self.rows.dtype)
        bucket = (hashes >> np.uint64(64 - self.bits)).astype(np.intp)
        head = np.minimum(self.bucket_starts[bucket], n - 1).astype(np.intp)
        # First probe for every hash at once: its bucket's first entry. An empty bucket's "first
        # entry" belongs to another bucket, whose hashes have other top bits: never a false hit.
        hit = self.hashes[head] == hashes
        found = np.where(hit, self.rows[head], -1).astype(self.rows.dtype, copy=False)
        # Only the misses look their bucket's end up, and walk on if it holds more entries.
        todo = np.flatnonzero(~hit)
        end = self.bucket_starts[bucket[todo] + 1]
        go_on = head[todo] + 1 < end
        todo, at, end = todo[go_on], head[todo][go_on] + 1, end[go_on]
        while todo.size:
            hit = self.hashes[at] == hashes[todo]
            found[todo[hit]] = self.rows[at[hit]]
            go_on = ~hit & (at + 1 < end)
            todo, at, end = todo[go_on], at[go_on] + 1, end[go_on]
        return found


def positions_exact(sub_ids: pa.Array | pa.ChunkedArray, key_ids: pa.Array) -> np.ndarray:
    """Key row of each submission id, -1 where absent: Arrow's hash join, exact but slower."""
    found = pc.index_in(sub_ids, value_set=key_ids)
    if isinstance(found, pa.ChunkedArray):
        found = found.combine_chunks()
    return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def arrow_indices(values: np.ndarray) -> pa.Array:
    """An int64 numpy array as an Arrow array, zero-copy (``pa.array`` would import pandas)."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def _fixed_width(array: pa.Array) -> int:
    """The byte length shared by every string of ``array``, or 0."""
    if len(array) == 0 or not pa.types.is_string(array.type):
        return 0
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[
        array.offset : array.offset + len(array) + 1
    ]
    width = int(offsets[1] - offsets[0])
    return width if width > 0 and bool(np.all(np.diff(offsets) == width)) else 0


def _rows_as_bytes(array: pa.Array, width: int) -> np.ndarray:
    """A fixed-width string array's data as one ``V{width}`` element per string (a view)."""
    start = int(np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset])
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8)[start : start + width * len(array)]
    return data.view(f"V{width}")


def _verified(chunk: pa.Array, key_ids: pa.Array, found: np.ndarray, key_width: int) -> bool:
    """Whether every matched submission id equals, byte for byte, the key id it was matched to."""
    matched = found >= 0
    if not matched.all():
        rows = np.flatnonzero(matched)
        chunk = chunk.take(arrow_indices(rows))
        found = found[rows]
    if key_width and _fixed_width(chunk) == key_width:
        # One fixed-size copy per id, compared as raw bytes: no new string array to build.
        expected = _rows_as_bytes(key_ids, key_width)[found]
        return np.array_equal(
            expected.view(np.uint8), _rows_as_bytes(chunk, key_width).view(np.uint8)
        )
    return bool(key_ids.take(arrow_indices(found)).equals(chunk))


# Rows joined at a time: bounds the temporaries of a 10M-row join to a few tens of MB.
_JOIN_ROWS = 1 << 19


def positions(
    sub_ids: pa.Array | pa.ChunkedArray, key_ids: pa.Array, index: KeyIndex
) -> np.ndarray:
    """Key row of each submission id, -1 where it is not in the key; exact."""
    if isinstance(sub_ids, pa.Array):
        sub_ids = pa.chunked_array([sub_ids], type=sub_ids.type)
    if not index.usable:
        return positions_exact(sub_ids, key_ids)
    found = np.empty(len(sub_ids), dtype=index.rows.dtype)
    start = 0
    for chunk in sub_ids.chunks:
        for offset in range(0, len(chunk), _JOIN_ROWS):
            piece = chunk.slice(offset, _JOIN_ROWS)
            part = index.lookup(hash_ids(piece))
            if not _verified(piece, key_ids, part, index.id_width):
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
        return bool(sub_ids.equals(key_ids))
    start = 0
    for chunk in sub_ids.chunks:
        if not chunk.equals(key_ids.slice(start, len(chunk))):
            return False
        start += len(chunk)
    return True
