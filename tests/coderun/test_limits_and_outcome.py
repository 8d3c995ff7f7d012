"""Code limits within the server's maxima, the outcome's words and the kept log."""

import pytest
from pydantic import ValidationError

from app.coderun.limits import CodeLimits, beyond, maxima
from app.coderun.outcome import KAGGLE_WORDS, RunLog
from app.config import Settings


def test_the_issues_defaults_fit_the_default_maxima():
    assert CodeLimits() == CodeLimits(wall_seconds=600, memory_mb=2048, cpus=1, working_mb=1024)
    assert beyond(CodeLimits(), maxima(Settings())) == []


def test_a_limit_past_the_servers_maximum_is_named_with_its_setting():
    settings = Settings(code_max_wall_seconds=60, code_max_memory_mb=1024)
    problems = beyond(CodeLimits(wall_seconds=600, memory_mb=2048), maxima(settings))
    assert problems == [
        "code_limits.wall_seconds is 600; this server allows at most 60 "
        "(PODIUM_CODE_MAX_WALL_SECONDS)",
        "code_limits.memory_mb is 2048; this server allows at most 1024 "
        "(PODIUM_CODE_MAX_MEMORY_MB)",
    ]


def test_limits_must_be_positive_and_known():
    with pytest.raises(ValidationError):
        CodeLimits(wall_seconds=0)
    with pytest.raises(ValidationError):
        CodeLimits.model_validate({"wall_seconds": 10, "gpus": 1})


def test_every_failure_has_kaggles_words():
    assert KAGGLE_WORDS["timeout"] == "Notebook Timeout"
    assert KAGGLE_WORDS["memory"] == "Notebook Exceeded Allowed Compute"
    assert KAGGLE_WORDS["invalid_output"] == "Submission Scoring Error"


def test_a_long_log_says_how_much_it_left_out():
    log = RunLog(head=b"start\n", tail=b"end\n", total_bytes=1000)
    assert log.truncated
    assert log.text() == "start\n\n[... 990 bytes of output left out ...]\nend\n"
    short = RunLog(head=b"all of it\n", tail=b"", total_bytes=10)
    assert not short.truncated and short.text() == "all of it\n"
