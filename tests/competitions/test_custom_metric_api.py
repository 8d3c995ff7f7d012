"""Organisers' own Kaggle-style metric files, used through the HTTP API."""

import math

from tests.helpers import API, create_competition, csv_bytes, submit, upload_key

RMSE = b"""
import numpy as np


class ParticipantVisibleError(Exception):
    pass


def score(solution, submission, row_id_column_name, **params):
    if (submission["y"] < 0).any():
        raise ParticipantVisibleError("predictions must be non-negative")
    if (submission["y"] == 42).any():
        raise RuntimeError("secret internals")
    diff = solution["y"].astype(float).to_numpy() - submission["y"].astype(float).to_numpy()
    return float(np.sqrt(np.mean(diff ** 2)))
"""

KEY = csv_bytes(
    ["id", "y", "Usage"],
    ["a", 1.0, "Public"],
    ["b", 2.0, "Public"],
    ["c", 3.0, "Private"],
    ["d", 5.0, "Private"],
)


def _metric(client, headers, content=RMSE, direction="minimize", slug="own"):
    return client.put(
        f"{API}/competitions/{slug}/custom-metric",
        files={"file": ("metric.py", content, "text/x-python")},
        data={"direction": direction},
        headers=headers,
    )


def _ready(client, host, params=None):
    create_competition(
        client, host.headers, "own", metric={"name": "custom", "params": params or {}}
    )
    assert upload_key(client, host.headers, "own", KEY).status_code == 201
    response = _metric(client, host.headers)
    assert response.status_code == 200, response.text
    assert response.json()["direction"] == "minimize"


def test_custom_metric_scores_public_and_private_and_ranks_by_its_direction(
    client, host, alice, bob
):
    _ready(client, host)
    good = submit(
        client,
        alice.headers,
        csv_bytes(["id", "y"], ["a", 1], ["b", 2], ["c", 3], ["d", 4]),
        slug="own",
    )
    worse = submit(
        client,
        bob.headers,
        csv_bytes(["id", "y"], ["a", 2], ["b", 3], ["c", 3], ["d", 5]),
        slug="own",
    )
    view = client.get(f"{API}/submissions/{good.json()['id']}", headers=host.headers).json()
    assert view["status"] == "scored", view
    assert view["public_score"] == 0.0
    assert math.isclose(view["private_score"], math.sqrt(0.5))
    assert (
        client.get(f"{API}/submissions/{worse.json()['id']}", headers=host.headers).json()[
            "public_score"
        ]
        == 1.0
    )
    rows = client.get(f"{API}/competitions/own/leaderboard", headers=alice.headers).json()["rows"]
    assert [r["team"] for r in rows] == ["alice", "bob"]


def test_participant_visible_errors_reach_the_participant_and_others_stay_with_the_host(
    client, host, alice
):
    _ready(client, host)
    negative = submit(
        client,
        alice.headers,
        csv_bytes(["id", "y"], ["a", -1], ["b", 2], ["c", 3], ["d", 4]),
        slug="own",
    )
    view = client.get(f"{API}/submissions/{negative.json()['id']}", headers=alice.headers).json()
    assert view["status"] == "failed" and view["error"] == "predictions must be non-negative"


def test_a_crashing_custom_metric_shows_participants_a_generic_failure(client, host, alice):
    _ready(client, host)
    response = submit(
        client,
        alice.headers,
        csv_bytes(["id", "y"], ["a", 1], ["b", 42], ["c", 3], ["d", 4]),
        slug="own",
    )
    submission_id = response.json()["id"]
    mine = client.get(f"{API}/submissions/{submission_id}", headers=alice.headers).json()
    theirs = client.get(f"{API}/submissions/{submission_id}", headers=host.headers).json()
    assert mine["status"] == "failed" and "secret internals" not in mine["error"]
    assert "secret internals" in theirs["host_error"]


def test_a_metric_file_that_does_not_define_score_is_422(client, host):
    create_competition(client, host.headers, "own", metric={"name": "custom"})
    response = _metric(client, host.headers, content=b"def scoring(a, b):\n    return 1\n")
    assert response.status_code == 422
    assert "score" in response.json()["detail"]


def test_a_metric_file_that_cannot_score_the_key_is_422(client, host):
    create_competition(client, host.headers, "own", metric={"name": "custom"})
    upload_key(client, host.headers, "own", KEY)
    broken = (
        b"def score(solution, submission, row_id_column_name):\n"
        b"    return solution['missing'].sum()\n"
    )
    response = _metric(client, host.headers, content=broken)
    assert response.status_code == 422
    assert "missing" in response.json()["detail"]


def test_built_in_competitions_refuse_a_metric_file(client, host):
    create_competition(client, host.headers, "builtin")
    assert _metric(client, host.headers, slug="builtin").status_code == 409


def test_participants_cannot_upload_a_metric_file(client, host, alice):
    create_competition(client, host.headers, "own", metric={"name": "custom"})
    assert _metric(client, alice.headers).status_code == 403


def test_submissions_wait_for_the_metric_file(client, host, alice):
    create_competition(client, host.headers, "own", metric={"name": "custom"})
    upload_key(client, host.headers, "own", KEY)
    response = submit(
        client,
        alice.headers,
        csv_bytes(["id", "y"], ["a", 1], ["b", 2], ["c", 3], ["d", 4]),
        slug="own",
    )
    assert response.status_code == 409 and "metric file" in response.json()["detail"]


def test_custom_metrics_read_gzipped_and_zipped_uploads(client, host, alice):
    import gzip
    import io
    import zipfile

    _ready(client, host)
    rows = csv_bytes(["id", "y"], ["a", 1], ["b", 2], ["c", 3], ["d", 5])
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as zf:
        zf.writestr("predictions.csv", rows)
    for content in (gzip.compress(rows), packed.getvalue()):
        response = submit(client, alice.headers, content, slug="own")
        view = client.get(
            f"{API}/submissions/{response.json()['id']}", headers=alice.headers
        ).json()
        assert view["status"] == "scored" and view["public_score"] == 0.0, view
