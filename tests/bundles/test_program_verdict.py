"""What came of a scoring program's run, from what the jail reported: scores, or a failure in two
voices (the participant's never holds the program's output). Pure: no jail here."""

import base64
import json
from typing import Any

import pytest

from app.bundles import Column, Computed, Split
from app.coderun.outcome import RunLog
from app.jobs.program import ProgramPlan, _result
from app.programs.jailed import JailedRun, ProgramLimits
from app.programs.verdict import verdict

SECRET = "row-17 is a cat"
OUTPUT = f"Traceback...\nthe reference says {SECRET}\n".encode()
COLUMNS = (
    Column("mean", "Mean", "maximize", computed=Computed("mean", ("acc", "f1"))),
    Column("acc", "Accuracy", "maximize"),
    Column("f1", "F1", "maximize", source_key="F1 score"),
)
SPLITS = (Split("dev", "Dev", "public"), Split("test", "Test", "hidden"))
LIMITS = ProgramLimits(wall_seconds=30, memory_mb=512)


def ran(status: dict[str, Any] | None, **facts: Any) -> JailedRun:
    return JailedRun(
        status=status,
        log=RunLog(head=OUTPUT, tail=b"", total_bytes=len(OUTPUT)),
        timed_out=facts.get("timed_out", False),
        oom_kills=facts.get("oom_kills", 0),
        returncode=facts.get("returncode", 0),
        seconds=1.0,
    )


def coda(files: dict[str, bytes], code: int = 0) -> dict[str, Any]:
    encoded = {k: {"data": base64.b64encode(v).decode()} for k, v in files.items()}
    return {"status": "exited", "code": code, "files": encoded}


def judge(run: JailedRun, kind: str = "codabench") -> Any:
    return verdict(run, kind=kind, columns=COLUMNS, splits=SPLITS, limits=LIMITS)


@pytest.mark.parametrize(
    ("run", "participant"),
    [
        (ran(None, timed_out=True), "did not finish within its time limit of 30 s"),
        (ran(None, oom_kills=1), "ran out of memory (its limit is 512 MB)"),
        (ran(None, returncode=-9), "the scoring program failed on this submission"),
        (ran(coda({}, code=2)), "exited with status 2 on this submission"),
        (ran(coda({})), "could not be read as scores"),
        (ran(coda({"scores.json": b"[1, 2]"})), "could not be read as scores"),
        (ran(coda({"scores.txt": b"other: 1\n"})), "wrote no score for any column"),
        (ran({"status": "error", "error": "KeyError"}), "failed on this submission (KeyError)"),
    ],
    ids=["timeout", "memory", "killed", "exit", "no-file", "not-object", "no-column", "raised"],
)
def test_each_failure_has_a_short_message_and_the_output_for_the_host(
    run: JailedRun, participant: str
) -> None:
    kind = "evalai" if (run.status or {}).get("status") == "error" else "codabench"
    found = judge(run, kind)
    assert found.scores is None
    assert participant in found.error
    assert SECRET not in found.error  # the program's output may print the reference data
    assert SECRET in found.host_error and "end of the scoring program's output" in found.host_error


def test_the_host_learns_what_the_program_wrote_instead_of_the_columns() -> None:
    found = judge(ran(coda({"scores.txt": b"other: 1\n"})))
    assert "wrote none of the columns (acc, F1 score)" in found.host_error
    assert "'other' is not a column" in found.host_error


def test_scores_txt_without_spaces_fills_the_columns_by_their_program_keys() -> None:
    found = judge(ran(coda({"scores.txt": b"acc:0.5\nF1 score:0.25\nDuration: 3\n"})))
    assert found.error is None and found.scores is not None
    assert found.scores.scores["acc"] == {"public": 0.5}
    assert found.scores.scores["f1"] == {"public": 0.25}


def plan(kind: str) -> ProgramPlan:
    return ProgramPlan(
        kind=kind,
        ref="",
        command=None,
        phase_codename="test",
        splits=(),
        reference_names=(),
        filename="a.json",
        execution_time_limit=None,
    )


DEFINITIONS = [
    {"key": "mean", "title": "Mean", "computed": {"op": "mean", "of": ["acc", "f1"]}},
    {"key": "acc", "title": "Accuracy", "scorer": "program", "direction": "maximize"},
    {
        "key": "f1",
        "title": "F1",
        "scorer": "program",
        "source_key": "F1 score",
        "direction": "maximize",
    },
]


def test_evalai_splits_go_to_the_public_and_the_private_board_and_nan_is_blank() -> None:
    result = {
        "result": [
            {"dev": {"acc": 0.5, "F1 score": "np.float64(0.25)"}},
            {"test": {"acc": 1.0, "F1 score": float("nan")}},
        ],
        "submission_result": {"nan": float("nan")},
    }
    returned = {"status": "returned", "result": json.dumps(result)}
    found = judge(ran(returned), "evalai")
    assert found.scores is not None
    score = _result(plan("evalai"), found.scores, DEFINITIONS, SPLITS)
    assert score.columns is not None
    assert score.columns["acc"] == {"score": 1.0, "public": 0.5, "private": 1.0}
    assert score.columns["f1"] == {"score": 0.25, "public": 0.25, "private": None}
    assert score.columns["mean"]["public"] == 0.375 and score.columns["mean"]["private"] is None
    assert (score.public, score.private) == (0.375, None)
    json.dumps(score.details, allow_nan=False)  # stored as strict JSON: PostgreSQL takes it


def test_a_phase_without_a_private_split_shows_the_same_values_on_both_boards() -> None:
    returned = {"status": "returned", "result": json.dumps({"result": [{"dev": {"acc": 0.5}}]})}
    found = verdict(ran(returned), kind="evalai", columns=COLUMNS, splits=SPLITS[:1], limits=LIMITS)
    assert found.scores is not None
    score = _result(plan("evalai"), found.scores, DEFINITIONS, SPLITS[:1])
    assert score.columns is not None
    assert score.columns["acc"] == {"score": 0.5, "public": 0.5, "private": 0.5}


def test_a_coda_board_is_the_same_on_both_boards() -> None:
    found = judge(ran(coda({"scores.json": b'{"acc": 0.5, "F1 score": 1.0}'})))
    assert found.scores is not None
    score = _result(plan("codabench"), found.scores, DEFINITIONS, ())
    assert (score.score, score.public, score.private) == (0.75, 0.75, 0.75)
