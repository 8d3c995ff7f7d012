"""Alignment by id: the in-order fast path, the vectorised hash join and a plain pandas merge agree."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.metrics import get_metric
from app.scoring.intake import (
    AnswerKeyTable,
    IntakeError,
    _align_rows,
    read_answer_key,
    read_submission,
)
from app.scoring.intake_align import KeyIndex, hash_ids, in_key_order, positions, positions_exact
from app.scoring.intake_source import DEFAULT_LIMITS

# Any string can be an id: empty, unicode, long, with spaces, commas or quotes.
any_ids = st.lists(st.text(max_size=60), min_size=1, max_size=150, unique=True)
# Long ids that differ only past the hashed head: every hash collides, so the join must fall
# back to the exact path and still be right.
long_ids = st.lists(
    st.text(alphabet="ab", min_size=1, max_size=12), min_size=1, max_size=60, unique=True
).map(lambda tails: ["x" * 40 + t + "y" * 10 for t in tails])


def align(sub_ids: pa.Array, key_ids: pa.Array) -> np.ndarray | None:
    """Positions that put the submission's rows in key order (``y_sub[order]``), or None when they
    already are: the intake's alignment on bare id arrays, without a file around them."""
    key = AnswerKeyTable("id", [], key_ids, np.zeros(0), None)
    rows = _align_rows(None, pa.chunked_array([sub_ids], type=sub_ids.type), key, DEFAULT_LIMITS)
    if rows is None:
        return None
    order = np.empty(len(key_ids), dtype=np.int64)
    order[rows] = np.arange(len(rows))
    return order


def _pandas_positions(sub_ids: list[str], key_ids: list[str]) -> np.ndarray:
    key = pd.DataFrame({"id": key_ids, "key_row": np.arange(len(key_ids))})
    sub = pd.DataFrame({"id": sub_ids, "sub_row": np.arange(len(sub_ids))})
    merged = sub.merge(key, on="id", how="left").sort_values("sub_row")
    return merged["key_row"].fillna(-1).to_numpy(dtype=np.int64)


@settings(max_examples=150, deadline=None)
@given(key_ids=st.one_of(any_ids, long_ids), data=st.data())
def test_fast_path_hash_join_and_pandas_merge_agree_on_any_order(key_ids, data):
    order = data.draw(st.permutations(range(len(key_ids))))
    sub_ids = [key_ids[i] for i in order]
    key = pa.array(key_ids, pa.string())
    sub = pa.array(sub_ids, pa.string())
    values = np.arange(len(sub_ids), dtype=np.float64) * 1.5  # a prediction per submission row

    expected = np.empty(len(key_ids))
    expected[_pandas_positions(sub_ids, key_ids)] = values  # pandas: merge, then key order

    joined = positions(sub, key, KeyIndex.build(key))  # the hash join, even when in order
    by_hash = np.empty(len(key_ids))
    by_hash[joined] = values
    np.testing.assert_array_equal(by_hash, expected)

    order_or_none = align(sub, key)
    by_align = values if order_or_none is None else values[order_or_none]
    np.testing.assert_array_equal(by_align, expected)
    assert (order_or_none is None) == (sub_ids == key_ids) == in_key_order(sub, key)


@settings(max_examples=150, deadline=None)
@given(
    key_ids=st.one_of(any_ids, long_ids),
    others=st.lists(st.text(max_size=60), max_size=20),
    data=st.data(),
)
def test_hash_join_finds_exactly_the_ids_pandas_finds(key_ids, others, data):
    kept = data.draw(st.lists(st.sampled_from(key_ids), max_size=len(key_ids) + 5))
    sub_ids = data.draw(st.permutations(kept + others))
    if not sub_ids:
        return
    key = pa.array(key_ids, pa.string())
    sub = pa.array(sub_ids, pa.string())
    expected = _pandas_positions(sub_ids, key_ids)
    np.testing.assert_array_equal(positions(sub, key, KeyIndex.build(key)), expected)
    np.testing.assert_array_equal(positions_exact(sub, key), expected)


def test_colliding_hashes_fall_back_to_the_exact_join():
    key_ids = ["p" * 40 + f"{i:04d}" + "s" * 8 for i in range(300)]
    key = pa.array(key_ids)
    index = KeyIndex.build(key)
    assert len(np.unique(index.hashes)) == 1  # every id hashes alike: the worst case
    rng = np.random.default_rng(3)
    order = rng.permutation(300)
    sub = pa.chunked_array(
        [pa.array([key_ids[i] for i in order[:150]]), pa.array([key_ids[i] for i in order[150:]])]
    )
    np.testing.assert_array_equal(positions(sub, key, index), order)


def test_hashes_are_the_same_for_equal_ids_whatever_the_chunking_or_slicing():
    ids = pa.array(["", "a", "ab", "abcdefgh", "abcdefghi", "é" * 30, "z" * 100, "a,b", '"q"'])
    whole = hash_ids(ids)
    sliced = np.concatenate([hash_ids(ids.slice(0, 4)), hash_ids(ids.slice(4))])
    np.testing.assert_array_equal(whole, sliced)
    assert len(set(whole.tolist())) == len(ids)


@pytest.mark.parametrize("width", [1, 7, 8, 12, 16, 33, 40, 41, 64])
def test_ids_of_one_width_hash_as_they_do_among_other_widths(width):
    rng = np.random.default_rng(width)
    ids = ["".join(rng.choice(list("abcxyz019-_"), size=width)) for _ in range(50)]
    alone = hash_ids(pa.array(ids))  # every id the same length: the fixed-width path
    mixed = hash_ids(pa.array(ids + ["a" * (width + 1)]))[:-1]
    np.testing.assert_array_equal(alone, mixed)


def test_align_names_repeated_unknown_and_missing_ids_together():
    key = pa.array(["a", "b", "c", "d"])
    with pytest.raises(IntakeError) as caught:
        align(pa.array(["b", "b", "z", "a"]), key)
    assert caught.value.kind == "duplicate_ids"
    message = caught.value.message
    assert "'b'" in message and "'z'" in message and "'c', 'd'" in message


csv_safe_ids = st.lists(
    st.text(
        alphabet=st.characters(codec="utf-8", categories=("L", "N"), include_characters="_-. "),
        min_size=1,
        max_size=20,
    )
    .map(str.strip)
    .filter(bool),
    min_size=2,
    max_size=80,
    unique=True,
)


@settings(max_examples=60, deadline=None)
@given(key_ids=csv_safe_ids, data=st.data())
def test_read_submission_matches_a_pandas_merge_of_the_files(tmp_path_factory, key_ids, data):
    folder = tmp_path_factory.mktemp("files")
    order = data.draw(st.permutations(range(len(key_ids))))
    truth = [i % 2 for i in range(len(key_ids))]
    scores = [round(0.01 * ((i * 37) % 101), 2) for i in range(len(key_ids))]
    (folder / "key.csv").write_text(
        "id,target\n" + "".join(f"{k},{t}\n" for k, t in zip(key_ids, truth, strict=True)), "utf-8"
    )
    (folder / "sub.csv").write_text(
        "id,target\n" + "".join(f"{key_ids[i]},{scores[i]}\n" for i in order), "utf-8"
    )
    metric = get_metric("roc_auc")
    key = read_answer_key(folder / "key.csv", metric=metric, params=metric.parse_params(None))
    got = read_submission(folder / "sub.csv", key=key, metric=metric)
    frame_key = pd.read_csv(folder / "key.csv", dtype={"id": str}, keep_default_na=False)
    frame_sub = pd.read_csv(folder / "sub.csv", dtype={"id": str}, keep_default_na=False)
    merged = frame_key.merge(frame_sub, on="id", suffixes=("_true", "_pred"))
    np.testing.assert_array_equal(got, merged["target_pred"].to_numpy())


@pytest.mark.parametrize("sub_ids", [["cccc", "dddd"], ["cc", "ddddddd"]])
def test_a_hash_match_between_different_ids_is_caught_by_the_byte_comparison(monkeypatch, sub_ids):
    from app.scoring import intake_align

    key = pa.array(["aaaa", "bbbb"])
    index = KeyIndex.build(key)
    forged = hash_ids(key)  # pretend the submission's ids hash exactly like the key's
    monkeypatch.setattr(intake_align, "hash_ids", lambda ids: forged[: len(ids)])
    np.testing.assert_array_equal(positions(pa.array(sub_ids), key, index), [-1, -1])


def test_duplicate_key_ids_are_found_even_when_the_ids_defeat_the_hash(tmp_path):
    ids = ["p" * 40 + f"{i:04d}" + "s" * 8 for i in range(300)]
    rows = [f"{i},{n % 2}" for n, i in enumerate(ids + [ids[7]])]
    path = tmp_path / "key.csv"
    path.write_text("id,target\n" + "\n".join(rows) + "\n")
    metric = get_metric("roc_auc")
    with pytest.raises(IntakeError) as caught:
        read_answer_key(path, metric=metric, params=metric.parse_params(None))
    assert caught.value.kind == "duplicate_ids" and ids[7] in caught.value.message
