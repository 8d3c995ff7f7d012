"""Blame the right party and leak nothing (issue 8): how a file fails never depends on the hidden
Usage, values that would break a metric are the participant's fault, and the sample submission
gives nothing of the key away."""

import csv
import io

import numpy as np
import pytest

from app.metrics.metric import Metric
from app.scoring.core import ScoringError, score_aligned
from app.scoring.intake import AnswerKeyTable
from tests.helpers import API, create_competition, csv_bytes, submit, upload_key

# Six rows: two public, two private, two ignored.
USAGES = ["Public", "Public", "Private", "Private", "Ignored", "Ignored"]


def _competition(client, host, metric: str, targets: list, slug: str = "blame") -> None:  # type: ignore[no-untyped-def]
    create_competition(client, host.headers, slug, metric={"name": metric})
    key = csv_bytes(
        ["id", "target", "Usage"],
        *[[f"r{i}", t, u] for i, (t, u) in enumerate(zip(targets, USAGES, strict=True))],
    )
    assert upload_key(client, host.headers, slug, key).status_code == 201


def _outcome(client, caller, values: list, slug: str = "blame") -> dict:  # type: ignore[no-untyped-def]
    content = csv_bytes(["id", "target"], *[[f"r{i}", v] for i, v in enumerate(values)])
    response = submit(client, caller.headers, content, slug=slug)
    if response.status_code == 422:
        return {"status": "refused", "error": response.json()["detail"]}
    assert response.status_code == 202, response.text
    return client.get(f"{API}/submissions/{response.json()['id']}", headers=caller.headers).json()


@pytest.mark.parametrize(
    "metric, targets, good, bad",
    [
        ("quadratic_weighted_kappa", [1, 2, 3, 1, 2, 3], 2, 2.5),
        ("rmsle", [1, 2, 3, 1, 2, 3], 1.0, -3.0),
    ],
)
def test_an_invalid_value_fails_the_same_way_in_every_row_whatever_its_usage(
    client, host, alice, metric, targets, good, bad
):
    _competition(client, host, metric, targets)
    messages = {}
    for row in (0, 2, 4):  # a public, a private and an ignored row
        values = [good] * 6
        values[row] = bad
        outcome = _outcome(client, alice, values)
        assert outcome["status"] == "failed", (row, outcome)
        assert f"'r{row}'" in outcome["error"]
        messages[row] = outcome["error"].replace(f"'r{row}'", "'ID'")
    assert len(set(messages.values())) == 1, messages


def test_a_value_that_would_overflow_rmse_is_the_participants_fault(client, host, alice):
    _competition(client, host, "rmse", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    for row in (0, 4):  # a scored and an ignored row fail alike
        values = [1.0] * 6
        values[row] = 1e200
        outcome = _outcome(client, alice, values)
        assert outcome["status"] in ("failed", "refused"), outcome
        assert "too large to score" in outcome["error"] and f"'r{row}'" in outcome["error"]
    hosts_view = client.get(f"{API}/competitions/blame/submissions", headers=host.headers).json()
    assert all(s.get("host_error") is None for s in hosts_view)
    assert all(s.get("refunded", True) for s in hosts_view)
    quota = client.get(f"{API}/competitions/blame/quota", headers=alice.headers).json()
    assert quota["used_today"] == 0


def test_a_non_finite_score_is_blamed_on_the_submission():
    metric = Metric(
        name="overflowing",
        score=lambda y_true, y_pred, **_: float("inf"),
        direction="minimize",
        cell="number",
    )
    key = AnswerKeyTable(
        id_column="id",
        target_columns=["target"],
        ids=__import__("pyarrow").array(["a", "b"]),
        y_true=np.array([1.0, 2.0]),
        usage=None,
    )
    with pytest.raises(ScoringError) as caught:
        score_aligned(metric, metric.parse_params(None), key, np.array([1.0, 2.0]))
    assert caught.value.source == "submission" and caught.value.kind == "non_finite"


def _sample(client, host, slug: str, rows: list[list[str]]) -> str:  # type: ignore[no-untyped-def]
    create_competition(client, host.headers, slug, metric={"name": "macro_f1"})
    key = "id,target,Usage\n" + "".join(f'"{i}",{t},{u}\n' for i, t, u in rows)
    assert upload_key(client, host.headers, slug, key.encode()).status_code == 201
    response = client.get(f"{API}/competitions/{slug}/sample-submission")  # no token
    assert response.status_code == 200, response.text
    return response.text


def test_the_sample_submission_is_public_sorted_and_quoted_only_where_needed(client, host):
    # Sorted by Usage, as a host might keep it.
    rows = [
        ["m,1", "cat", "Public"],
        ["k2", "dog", "Public"],
        ["z3", "cat", "Public"],
        ["a4", "aardvark", "Private"],
        ["b5", "dog", "Private"],
    ]
    text = _sample(client, host, "zoo", rows)
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == ["id", "target"]
    assert [r[0] for r in parsed[1:]] == sorted(i for i, _, _ in rows)
    # The filler is the first of the labels the competition publishes, the same on every row.
    published = client.get(f"{API}/competitions/zoo", headers=host.headers).json()["labels"]
    assert {r[1] for r in parsed[1:]} == {sorted(published)[0]}
    # Quoted only where needed: the id holding a comma.
    assert text.splitlines()[0] == "id,target" and '"m,1",' in text and '"aardvark"' not in text


def test_the_sample_submission_does_not_tell_which_labels_the_public_rows_hold(client, host):
    """Two keys with one label set and different public rows publish the same sample file: its
    filler is chosen from the label set, never from the rows of the split."""
    labels = ["ant", "bee", "cat"]
    ids = ["r1", "r2", "r3", "r4", "r5", "r6"]
    # The public rows of the first hold only "cat"; those of the second only "ant" and "bee".
    first = [
        [i, t, u]
        for i, t, u in zip(
            ids,
            ["cat", "cat", "cat", "ant", "bee", "bee"],
            ["Public"] * 3 + ["Private"] * 3,
            strict=True,
        )
    ]
    second = [
        [i, t, u]
        for i, t, u in zip(
            ids,
            ["ant", "bee", "ant", "cat", "cat", "bee"],
            ["Public"] * 3 + ["Private"] * 3,
            strict=True,
        )
    ]
    one, two = _sample(client, host, "one", first), _sample(client, host, "two", second)
    assert one == two
    assert {line.split(",")[1] for line in one.splitlines()[1:]} == {labels[0]}
    # A host's declared label set is the set the filler comes from.
    declared = client.patch(
        f"{API}/competitions/one",
        json={"labels": ["zebra", "cat", "ant", "bee"]},
        headers=host.headers,
    )
    assert declared.status_code == 200, declared.text
    text = client.get(f"{API}/competitions/one/sample-submission").text
    assert {line.split(",")[1] for line in text.splitlines()[1:]} == {"ant"}


def test_an_unknown_competitions_sample_is_404(client):
    assert client.get(f"{API}/competitions/nope/sample-submission").status_code == 404
