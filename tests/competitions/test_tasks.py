"""Multi-task phases made through the API: each task its own columns, its own part of the key
and its own file of a submission; the board shows the tasks side by side or one at a time and
ranks by the average rank, a task a submission did not score ranking last."""

import io
import zipfile
from typing import Any

import pytest

from tests.helpers import API, csv_bytes

# Task "cls": accuracy on labels; task "reg": RMSE on numbers. Both keys' rows are public.
CLS_KEY = csv_bytes(["id", "label"], ["a", "x"], ["b", "y"], ["c", "x"], ["d", "y"])
REG_KEY = csv_bytes(["id", "y"], ["a", 1.0], ["b", 2.0], ["c", 3.0], ["d", 4.0])
TASKS = [
    {
        "key": "cls",
        "title": "Classification",
        "columns": [{"key": "acc", "title": "Accuracy", "metric": {"name": "accuracy"}}],
    },
    {
        "key": "reg",
        "title": "Regression",
        "columns": [{"key": "rmse", "title": "RMSE", "metric": {"name": "rmse"}}],
    },
]
AVERAGE = {
    "key": "avg",
    "title": "Average rank",
    "computed": {"op": "average_rank", "of": ["cls.acc", "reg.rmse"]},
}


def zipped(**files: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in files.items():
            archive.writestr(name.replace("_", "."), data)
    return out.getvalue()


def labels(*values: str) -> bytes:
    return csv_bytes(["id", "label"], *[[k, v] for k, v in zip("abcd", values, strict=True)])


def numbers(*values: float) -> bytes:
    return csv_bytes(["id", "y"], *[[k, v] for k, v in zip("abcd", values, strict=True)])


def create(client: Any, host: Any, slug: str = "multi", **phase: Any) -> Any:
    body = {
        "slug": slug,
        "title": "Multi",
        "metric": {"name": "accuracy"},
        "phases": [{"name": "main", "tasks": TASKS, "columns": [AVERAGE], **phase}],
    }
    return client.post(f"{API}/competitions", json=body, headers=host.headers)


def key(client: Any, caller: Any, content: bytes, slug: str = "multi") -> Any:
    return client.put(
        f"{API}/competitions/{slug}/phases/main/answer-key",
        files={"file": ("key.zip", content, "application/zip")},
        headers=caller.headers,
    )


def submit(client: Any, caller: Any, content: bytes, slug: str = "multi") -> dict[str, Any]:
    response = client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": ("sub.zip", content, "application/zip")},
        headers=caller.headers,
    )
    assert response.status_code in (201, 202), response.text
    return client.get(f"{API}/submissions/{response.json()['id']}", headers=caller.headers).json()


def board(client: Any, caller: Any, **params: Any) -> dict[str, Any]:
    response = client.get(
        f"{API}/competitions/multi/leaderboard", params=params, headers=caller.headers
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_a_phase_shows_its_tasks_each_with_its_columns(client, host):
    response = create(client, host)
    assert response.status_code == 201, response.text
    (phase,) = response.json()["phases"]
    assert [(t["key"], t["title"]) for t in phase["tasks"]] == [
        ("cls", "Classification"),
        ("reg", "Regression"),
    ]
    assert phase["tasks"][1]["columns"][0]["metric"] == {"name": "rmse", "params": {}}
    assert phase["columns"] == [AVERAGE | {"hidden": False}]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"columns": [AVERAGE | {"computed": {"op": "average_rank", "of": ["cls.f1"]}}]}, "cls.f1"),
        ({"tasks": [TASKS[0], TASKS[0]]}, "duplicate task keys"),
        ({"tasks": [TASKS[0]]}, "at least 2"),
        ({"submission_kind": "code"}, "takes predictions"),
    ],
)
def test_bad_tasks_are_a_422_naming_the_problem(client, host, change, named):
    response = create(client, host, **change)
    assert response.status_code == 422, response.text
    assert named in response.text


def test_each_task_is_scored_on_its_own_file_and_the_board_ranks_by_average_rank(
    client, host, alice, bob, make_user
):
    assert create(client, host).status_code == 201
    assert key(client, host, zipped(cls_csv=CLS_KEY, reg_csv=REG_KEY)).status_code == 201
    carol = make_user("carol")
    # alice: accuracy 1.0, RMSE 1.0; bob: accuracy 0.5, RMSE 0.0; carol: accuracy 1.0, and no
    # file for the regression task.
    got = submit(
        client, alice, zipped(cls_csv=labels("x", "y", "x", "y"), reg_csv=numbers(2, 3, 4, 5))
    )
    assert got["status"] == "scored", got
    assert got["scores"]["cls.acc"]["public"] == 1.0
    assert got["scores"]["reg.rmse"]["public"] == pytest.approx(1.0)
    got = submit(
        client, bob, zipped(cls_csv=labels("x", "x", "x", "x"), reg_csv=numbers(1, 2, 3, 4))
    )
    assert got["scores"]["reg.rmse"]["public"] == 0.0
    got = submit(client, carol, zipped(cls_csv=labels("x", "y", "x", "y")))
    assert got["status"] == "scored", got
    assert got["scores"]["reg.rmse"]["public"] is None
    whole = board(client, alice)
    # cls: alice and carol 1st, bob 3rd; reg: bob 1st, alice 2nd, carol last (no value).
    assert [(r["team"], r["score"]) for r in whole["rows"]] == [
        ("alice", 1.5),
        ("bob", 2.0),
        ("carol", 2.0),
    ]
    assert [c["key"] for c in whole["columns"]] == ["avg", "cls.acc", "reg.rmse"]
    assert whole["tie_break"].startswith("a row lacking a task's value ranks below")
    # A submission's own row holds no average rank: it exists only on a board.
    assert got["scores"]["avg"] == {"public": None, "private": None}
    # A later entry of alice's missing a task does not replace her complete one on the board.
    submit(client, alice, zipped(cls_csv=labels("x", "y", "x", "y")))
    rows = board(client, alice)["rows"]
    assert rows[0]["team"] == "alice" and rows[0]["scores"]["reg.rmse"] == pytest.approx(1.0)
    assert [r["team"] for r in board(client, alice, task="reg")["rows"]] == [
        "bob",
        "alice",
        "carol",
    ]
    by_acc = board(client, alice, sort="cls.acc")
    assert [r["team"] for r in by_acc["rows"]][-1] == "bob"


def test_a_submission_that_is_no_zip_fails_on_every_task_as_the_participants_fault(
    client, host, alice
):
    assert create(client, host).status_code == 201
    assert key(client, host, zipped(cls_csv=CLS_KEY, reg_csv=REG_KEY)).status_code == 201
    got = submit(client, alice, labels("x", "y", "x", "y"))
    assert got["status"] == "failed"
    assert "one file per task" in got["error"]


def test_a_key_missing_a_tasks_file_is_a_422_naming_the_task(client, host):
    assert create(client, host).status_code == 201
    response = key(client, host, zipped(cls_csv=CLS_KEY))
    assert response.status_code == 422
    assert "task 'reg'" in response.json()["detail"]
    bad = key(client, host, zipped(cls_csv=CLS_KEY, reg_csv=b"id,y\na,not-a-number\n"))
    assert bad.status_code == 422 and "task 'reg'" in bad.json()["detail"]
    assert key(client, host, CLS_KEY).status_code == 422


def test_only_a_host_uploads_a_multi_task_key(client, host, alice):
    assert create(client, host).status_code == 201
    response = key(client, alice, zipped(cls_csv=CLS_KEY, reg_csv=REG_KEY))
    assert response.status_code in (403, 404)


def test_an_unknown_task_on_the_board_is_a_422_naming_the_tasks(client, host, alice):
    assert create(client, host).status_code == 201
    response = client.get(
        f"{API}/competitions/multi/leaderboard", params={"task": "boats"}, headers=alice.headers
    )
    assert response.status_code == 422
    assert "cls, reg" in response.json()["detail"]


def test_a_new_key_version_rescores_every_task_and_its_preview_ranks_by_average_rank(
    client, host, alice, bob
):
    assert create(client, host).status_code == 201
    assert key(client, host, zipped(cls_csv=CLS_KEY, reg_csv=REG_KEY)).status_code == 201
    submit(client, alice, zipped(cls_csv=labels("x", "y", "x", "y"), reg_csv=numbers(2, 3, 4, 5)))
    submit(client, bob, zipped(cls_csv=labels("x", "x", "x", "x"), reg_csv=numbers(1, 2, 3, 4)))
    # Version 2 moves the regression truth onto alice's predictions: she is first on both.
    fixed = zipped(cls_csv=CLS_KEY, reg_csv=numbers(2, 3, 4, 5))
    assert key(client, host, fixed).status_code == 201
    started = client.post(
        f"{API}/competitions/multi/rescore", params={"phase": "main"}, headers=host.headers
    )
    assert started.status_code == 202, started.text
    preview = client.get(
        f"{API}/competitions/multi/rescore/preview", params={"phase": "main"}, headers=host.headers
    ).json()
    moves = {c["team"]: c for c in preview["public"]}
    # Before: alice (1 + 2) / 2 and bob (2 + 1) / 2, alice ahead on the next column (accuracy);
    # after: alice first on both tasks, bob second on both.
    assert (moves["alice"]["old_score"], moves["bob"]["old_score"]) == (1.5, 1.5)
    assert (moves["alice"]["old_rank"], moves["bob"]["old_rank"]) == (1, 2)
    assert (moves["alice"]["new_score"], moves["bob"]["new_score"]) == (1.0, 2.0)
    assert (moves["alice"]["new_rank"], moves["bob"]["new_rank"]) == (1, 2)


def test_a_multi_task_phase_has_no_sample_csv_and_says_so(client, host, alice):
    assert create(client, host).status_code == 201
    assert key(client, host, zipped(cls_csv=CLS_KEY, reg_csv=REG_KEY)).status_code == 201
    response = client.get(f"{API}/competitions/multi/sample-submission", headers=alice.headers)
    assert response.status_code == 409, response.text
    assert "cls.csv" in response.json()["detail"]


def test_a_benchmarks_board_ranks_its_tasks_by_average_rank_as_any_board_does(
    client, host, alice, bob, make_user
):
    """A benchmark's board is read from the score rows (app.leaderboard.benchmark), not from the
    standings: its average rank is computed over its rows all the same, and a row lacking a
    task still ranks below every complete one."""
    body = {
        "slug": "multi",
        "title": "Multi",
        "metric": {"name": "accuracy"},
        "benchmark": True,
        "phases": [{"name": "main", "tasks": TASKS, "columns": [AVERAGE]}],
    }
    assert client.post(f"{API}/competitions", json=body, headers=host.headers).status_code == 201
    assert key(client, host, zipped(cls_csv=CLS_KEY, reg_csv=REG_KEY)).status_code == 201
    carol = make_user("carol")
    submit(client, alice, zipped(cls_csv=labels("x", "y", "x", "y"), reg_csv=numbers(2, 3, 4, 5)))
    submit(client, bob, zipped(cls_csv=labels("x", "x", "x", "x"), reg_csv=numbers(1, 2, 3, 4)))
    submit(client, carol, zipped(cls_csv=labels("x", "y", "x", "y")))
    whole = board(client, alice)
    assert whole["benchmark"] is True
    assert [(r["team"], r["score"], r["scores"]["avg"]) for r in whole["rows"]] == [
        ("alice", 1.5, 1.5),
        ("bob", 2.0, 2.0),
        ("carol", 2.0, 2.0),
    ]
    assert [r["key_version"] for r in whole["rows"]] == [1, 1, 1]
