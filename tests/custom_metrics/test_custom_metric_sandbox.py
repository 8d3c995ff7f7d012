"""Scoring with an organiser's metric file in a child process: results, limits and failures.

Every test here starts a real child process (about half a second each), so each one earns its run.
"""

import json
import resource
import uuid

import numpy as np
import pytest

from app.custom_metrics.sandbox import (
    GENERIC_FAILURE,
    CustomMetricFailure,
    SandboxLimits,
    check_custom_metric,
    run_custom_metric,
)
from app.scoring.core import ScoreResult, ScoringError
from tests.custom_metrics.processes import processes_with_argument

RMSE = """
    import numpy as np
    import pandas as pd


    def score(solution: pd.DataFrame, submission: pd.DataFrame, row_id_column_name: str) -> float:
        print("scoring", len(solution), "rows")  # organisers' debug output must not matter
        del solution[row_id_column_name]
        del submission[row_id_column_name]
        return float(np.sqrt(((solution["y"] - submission["y"]) ** 2).mean()))
"""

RAISES = """
    class ParticipantVisibleError(Exception):
        pass


    class WrongShape(ParticipantVisibleError):
        pass


    def score(solution, submission, row_id_column_name, **params):
        raise {error}
"""


@pytest.fixture
def regression(csv_file):
    """An answer key with Usage, and a submission in another row and column order."""
    rng = np.random.default_rng(3)
    ids = [f"id{i:03d}" for i in range(60)]
    truth = rng.normal(size=60)
    pred = truth + rng.normal(scale=0.5, size=60)
    usage = np.array(["Public", "Private", "Ignored"])[np.arange(60) % 3]
    pred[usage == "Ignored"] += 1000.0  # Ignored rows must not move any score
    key = csv_file(
        "key.csv",
        ["id", "y", "Usage"],
        [[i, repr(float(t)), u] for i, t, u in zip(ids, truth, usage, strict=True)],
    )
    order = rng.permutation(60)
    sub = csv_file("sub.csv", ["y", "id"], [[repr(float(pred[j])), ids[j]] for j in order])
    return key, sub, truth, pred, usage


def score(metric, key, sub, *, params=None, id_column=None, limits=None, solution_only=()):
    return run_custom_metric(
        metric_path=metric,
        answer_key=key,
        submission=sub,
        id_column=id_column,
        params=params or {},
        limits=limits or SandboxLimits(),
        solution_only_columns=solution_only,
    )


def failure(metric, key, sub, **kwargs) -> CustomMetricFailure:
    with pytest.raises(CustomMetricFailure) as caught:
        score(metric, key, sub, **kwargs)
    return caught.value


def rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


@pytest.fixture
def small(csv_file):
    key = csv_file("small_key.csv", ["id", "y"], [["a", 1.0], ["b", 2.0], ["c", 4.0]])
    sub = csv_file("small_sub.csv", ["id", "y"], [["c", 1.0], ["a", 1.0], ["b", 2.0]])
    return key, sub


def test_rmse_without_usage_is_one_score_for_every_board(metric_file, small):
    result = score(metric_file(RMSE), *small)
    expected = rmse(np.array([1.0, 2.0, 4.0]), np.array([1.0, 2.0, 1.0]))
    assert result == ScoreResult(score=expected, public=expected, private=expected, has_usage=False)


def test_rmse_with_usage_scores_public_and_private_rows_apart(metric_file, regression):
    key, sub, truth, pred, usage = regression
    result = score(metric_file(RMSE), key, sub)
    counted = usage != "Ignored"
    assert result.score == pytest.approx(rmse(truth[counted], pred[counted]), rel=1e-12)
    public, private = usage == "Public", usage == "Private"
    assert result.public == pytest.approx(rmse(truth[public], pred[public]), rel=1e-12)
    assert result.private == pytest.approx(rmse(truth[private], pred[private]), rel=1e-12)
    assert result.public != result.private
    assert result.has_usage


def test_checking_a_metric_scores_the_answer_key_against_itself(metric_file, regression):
    key = regression[0]
    result = check_custom_metric(
        metric_path=metric_file(RMSE),
        answer_key=key,
        id_column=None,
        params={},
        limits=SandboxLimits(),
    )
    assert result == ScoreResult(score=0.0, public=0.0, private=0.0, has_usage=True)


def test_the_metric_sees_kaggle_shaped_frames_and_its_params(metric_file, csv_file):
    # The jail lets the metric write nowhere the test can read: with report=True it raises on
    # its last call with what it saw, and the host's message carries it out.
    metric = metric_file("""
        import json

        calls = []

        def score(solution, submission, row_id_column_name, *, scale, label="x", report=False):
            calls.append({
                "id_column": row_id_column_name,
                "solution": solution.astype(str).to_dict("list"),
                "submission": submission.astype(str).to_dict("list"),
                "params": [scale, label],
            })
            if report and len(calls) == 3:
                raise ValueError("SEEN" + json.dumps(calls))
            return scale * len(solution)
    """)
    key = csv_file(
        "key.csv",
        ["row", "w", "tag", "Usage"],
        [
            ["01", 2.0, "NA", "Public"],
            ["2", 1.0, "None", "Private"],
            ["3", 0.5, "a", "Ignored"],
        ],
    )
    sub = csv_file("sub.csv", ["tag", "row"], [["b", "3"], ["null", "01"], ["NA", "2"]])
    result = score(metric, key, sub, params={"scale": 10}, id_column="row", solution_only=("w",))
    assert result == ScoreResult(score=20.0, public=10.0, private=10.0)
    caught = failure(
        metric,
        key,
        sub,
        params={"scale": 10, "report": True},
        id_column="row",
        solution_only=("w",),
    )
    calls = json.loads(caught.host_message.split("ValueError: SEEN", 1)[1].splitlines()[0])
    assert [c["id_column"] for c in calls] == ["row"] * 3
    assert calls[0]["solution"] == {"row": ["01", "2"], "w": ["2.0", "1.0"], "tag": ["NA", "None"]}
    assert calls[0]["submission"] == {"row": ["01", "2"], "tag": ["null", "NA"]}
    assert calls[1]["submission"] == {"row": ["01"], "tag": ["null"]}  # public
    assert calls[2]["solution"]["row"] == ["2"]  # private
    assert calls[0]["params"] == [10, "x"]


def test_printing_to_stdout_and_stderr_does_not_corrupt_the_result(metric_file, small):
    metric = metric_file("""
        import os, sys

        def score(solution, submission, row_id_column_name):
            print('{"status": "ok", "score": 99}')
            print("warning", file=sys.stderr)
            os.write(1, b"raw bytes on fd 1\\n")
            return 0.25
    """)
    assert score(metric, *small) == ScoreResult(0.25, 0.25, 0.25, has_usage=False)


def test_the_metric_cannot_read_the_servers_secrets(metric_file, small, monkeypatch):
    monkeypatch.setenv("PODIUM_SECRET_KEY", "s3cret-value")
    monkeypatch.setenv("PODIUM_DATABASE_URL", "postgresql://u:pw@db/podium")
    metric = metric_file("""
        import os

        class ParticipantVisibleError(Exception):
            pass

        def score(solution, submission, row_id_column_name):
            leaked = {k: v for k, v in os.environ.items() if "PODIUM" in k or "s3cret" in v}
            if leaked:
                raise ParticipantVisibleError(f"leaked: {leaked}")
            return 1.0
    """)
    assert score(metric, *small).score == 1.0


def test_a_metric_that_loops_forever_is_stopped_at_the_time_limit(metric_file, small):
    # The helper is found by a unique argument: inside the jail's PID namespace its pid differs.
    marker = f"300.{uuid.uuid4().int % 10**9}"
    metric = metric_file(f"""
        import subprocess

        def score(solution, submission, row_id_column_name):
            helper = subprocess.Popen(["sleep", {marker!r}])
            print("helper started", flush=True)
            while True:
                pass
    """)
    # 4 s: on a loaded machine starting Python and pandas alone can take 2 s. How soon after
    # the limit it is stopped is a figure (bench/bench_custom_metric_limits.py), not asserted.
    caught = failure(metric, *small, limits=SandboxLimits(timeout_seconds=4))
    assert caught.kind == "timeout"
    assert "exceeded the 4 s time limit" in caught.host_message
    assert "helper started" in caught.host_message
    assert caught.participant_message == GENERIC_FAILURE
    # What the metric started dies with it.
    assert processes_with_argument(marker) == []


def test_a_metric_that_allocates_without_end_fails_with_a_memory_message(metric_file, small):
    before = resource.getrlimit(resource.RLIMIT_AS)
    metric = metric_file("""
        def score(solution, submission, row_id_column_name):
            hoard = []
            while True:
                hoard.append(bytearray(16 * 1024 * 1024))
    """)
    caught = failure(metric, *small, limits=SandboxLimits(memory_bytes=512 * 1024**2))
    assert caught.kind == "memory"
    assert "exceeded the memory limit (512 MiB)" in caught.host_message
    assert caught.participant_message == GENERIC_FAILURE
    # The limit was the child's alone: this process can still allocate past it.
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert len(bytearray(600 * 1024**2)) == 600 * 1024**2


def test_a_participant_visible_error_is_shown_cut_at_280_characters(metric_file, small):
    message = "".join(f"{i % 10}" for i in range(1000))
    metric = metric_file(RAISES.format(error=f"ParticipantVisibleError({message!r})"))
    caught = failure(metric, *small)
    assert caught.kind == "participant_error"
    assert caught.participant_message == message[:280]
    assert caught.message == message[:280]  # what ScoringError handlers show
    assert caught.source == "submission"
    assert "Traceback" in caught.host_message


def test_a_subclass_of_participant_visible_error_is_shown_too(metric_file, small):
    metric = metric_file(RAISES.format(error="WrongShape('expected 3 rows per image')"))
    caught = failure(metric, *small)
    assert caught.participant_message == "expected 3 rows per image"
    assert caught.kind == "participant_error"


def test_any_other_error_is_for_the_host_only(metric_file, small):
    metric = metric_file(RAISES.format(error="ValueError('key column z9 is corrupt')"))
    caught = failure(metric, *small)
    assert caught.kind == "error"
    assert caught.participant_message == GENERIC_FAILURE
    assert "z9" not in caught.participant_message
    assert str(caught) == GENERIC_FAILURE  # a handler that prints the error leaks nothing
    assert "Traceback" in caught.host_message
    assert "ValueError: key column z9 is corrupt" in caught.host_message
    assert isinstance(caught, ScoringError) and caught.source == "metric"


@pytest.mark.parametrize(
    ("returned", "described"),
    [
        ("float('nan')", "a non-finite number: nan"),
        ("-np.inf", "a non-finite number: -inf"),
        ("'0.93'", "a builtins.str, not a number: '0.93'"),
    ],
)
def test_a_score_that_is_not_a_finite_number_fails(metric_file, small, returned, described):
    metric = metric_file(f"""
        import numpy as np

        def score(solution, submission, row_id_column_name):
            return {returned}
    """)
    caught = failure(metric, *small)
    assert caught.kind == "invalid_result"
    assert described in caught.host_message
    assert caught.participant_message == GENERIC_FAILURE


def test_a_metric_file_that_fails_to_load_is_reported_to_the_host(metric_file, small):
    caught = failure(metric_file("import no_such_module_podium\n"), *small)
    assert caught.kind == "error"
    assert "loading the metric file" in caught.host_message
    assert "No module named 'no_such_module_podium'" in caught.host_message


def test_mismatched_ids_are_rejected_before_the_metric_runs(metric_file, csv_file, small):
    key, _ = small
    sub = csv_file("sub.csv", ["id", "y"], [["a", 1.0], ["b", 2.0], ["zz", 3.0]])
    caught = failure(metric_file(RAISES.format(error="AssertionError('ran')")), key, sub)
    assert caught.kind == "submission"
    assert caught.participant_message == "1 id(s) are not in the answer key: 'zz'"
    assert "ran" not in caught.host_message
