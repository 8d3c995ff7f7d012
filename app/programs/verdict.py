"""What came of a scoring program's run: its scores per column, or a failure told as the platforms
tell it, in two voices: a short message for the participant (never the program's output, which may
print the hidden reference data) and, for the host, the reason with the end of that output.

Pure: a :class:`~app.programs.jailed.JailedRun` in, a :class:`ProgramVerdict` out.
"""

import base64
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from app.bundles.model import Column, Split
from app.bundles.runner import (
    ProgramOutputError,
    ProgramScores,
    map_coda_scores,
    map_evalai_result,
    parse_scores,
)
from app.programs.jailed import JailedRun, ProgramLimits

HOST_OUTPUT_CHARS = 4000  # the end of the program's output kept with the host's reason
_MEMORY_WORDS = ("MemoryError", "Unable to allocate", "Cannot allocate memory", "bad_alloc")
FAILED = "the scoring program failed on this submission; the host can see its error output"


@dataclass(frozen=True)
class ProgramVerdict:
    scores: ProgramScores | None
    error: str | None = None  # the participant's words
    host_error: str | None = None  # the host's: the reason and the end of the program's output
    # A failure caused by the platform (no jail, the runner crashed) is not the submission's.
    participants_fault: bool = True


def _with_output(reason: str, run: JailedRun) -> str:
    tail = run.log.text()[-HOST_OUTPUT_CHARS:]
    return f"{reason}\n--- the end of the scoring program's output ---\n{tail}"


def _failed(participant: str, host: str, run: JailedRun, *, fault: bool = True) -> ProgramVerdict:
    return ProgramVerdict(None, participant, _with_output(host, run), fault)


def verdict(
    run: JailedRun,
    *,
    kind: str,
    columns: Sequence[Column],
    splits: Sequence[Split],
    limits: ProgramLimits,
) -> ProgramVerdict:
    status = run.status or {}
    state = status.get("status")
    if run.timed_out:
        words = (
            f"the scoring program did not finish within its time limit of {limits.wall_seconds:g} s"
        )
        return _failed(words, f"{words}; it was stopped", run)
    memory = run.oom_kills > 0 or (
        state != "returned" and any(w in run.log.text() for w in _MEMORY_WORDS)
    )
    if memory:
        words = f"the scoring program ran out of memory (its limit is {limits.memory_mb} MB)"
        return _failed(words, words, run)
    if state == "runner_error" or not state:
        reason = status.get("message") or f"it reported nothing (exit status {run.returncode})"
        return _failed(FAILED, f"the scoring program's runner failed: {reason}", run)
    try:
        if kind == "evalai":
            if state != "returned":
                error = str(status.get("error") or "an error")[:100]
                return _failed(
                    f"the scoring program failed on this submission ({error}); the host can see "
                    "its error output",
                    f"evaluate() raised {error}",
                    run,
                )
            scores = map_evalai_result(json.loads(status["result"]), columns=columns, splits=splits)
        else:
            if state != "exited" or status.get("code") != 0:
                code = status.get("code")
                why = "could not start" if code is None else f"exited with status {code}"
                return _failed(
                    f"the scoring program {why} on this submission; the host can see its error "
                    "output",
                    f"the scoring program {why}",
                    run,
                )
            files = {}
            for name, found in (status.get("files") or {}).items():
                if found.get("too_large") or found.get("not_a_file"):
                    raise ProgramOutputError("is not a regular file of at most 1 MiB", file=name)
                files[name] = base64.b64decode(found["data"])
            values, notes = parse_scores(files)
            mapped = map_coda_scores(values, columns=columns)
            scores = ProgramScores(mapped.scores, notes + mapped.notes)
    except (ProgramOutputError, ValueError, KeyError, TypeError) as exc:
        detail = exc.detail if isinstance(exc, ProgramOutputError) else repr(exc)
        return _failed(
            "the scoring program's output could not be read as scores; the host can see why",
            f"the scoring program's output could not be read as scores: {detail}",
            run,
        )
    written = [
        c.key
        for c in columns
        if c.computed is None
        and any(v is not None and math.isfinite(v) for v in scores.scores.get(c.key, {}).values())
    ]
    if not written:
        wanted = ", ".join(c.program_key for c in columns if c.computed is None)
        noted = "; ".join(scores.notes[:10]) or "nothing else"
        return _failed(
            "the scoring program wrote no score for any column of the leaderboard",
            f"the scoring program wrote none of the columns ({wanted}); it wrote: {noted}",
            run,
        )
    return ProgramVerdict(scores)


# --- the ingestion step ---------------------------------------------------------------------


@dataclass(frozen=True)
class IngestionVerdict:
    """The ingestion step's end: ``failure`` None when it wrote its output, else the code run's
    failure name (``timeout``, ``memory``, ``runtime_error``, ``output_too_large``), the
    participant's words (never the run's output: the team reads its log where the phase shows
    it) and the host's (the reason and the end of the output)."""

    failure: str | None
    error: str | None = None
    host_error: str | None = None


def _ingestion_failed(failure: str, words: str, host: str, run: JailedRun) -> IngestionVerdict:
    tail = run.log.text()[-HOST_OUTPUT_CHARS:]
    return IngestionVerdict(
        failure,
        f"your code failed in the ingestion program: {words}",
        f"the ingestion step failed: {host}\n--- the end of the ingestion's output ---\n{tail}",
    )


def ingestion_verdict(run: JailedRun, *, limits: ProgramLimits) -> IngestionVerdict:
    status = run.status or {}
    state = status.get("status")
    if run.timed_out:
        words = f"it did not finish within the time limit of {limits.wall_seconds:g} s"
        return _ingestion_failed("timeout", words, f"{words}; it was stopped", run)
    if run.oom_kills > 0 or (state != "exited" and any(w in run.log.text() for w in _MEMORY_WORDS)):
        words = f"it ran out of memory (the limit is {limits.memory_mb} MB)"
        return _ingestion_failed("memory", words, words, run)
    if state != "exited":
        reason = status.get("message") or status.get("error") or f"exit status {run.returncode}"
        words = "it stopped before reporting how it ended"
        return _ingestion_failed("runtime_error", words, f"{words} ({reason})", run)
    if status.get("code") != 0:
        words = f"it exited with status {status.get('code')}"
        return _ingestion_failed("runtime_error", words, words, run)
    output = status.get("output") or {}
    if output.get("too_large") or run.output_bytes is None:
        words = f"its output is larger than {limits.output_mb} MB"
        return _ingestion_failed("output_too_large", words, words, run)
    return IngestionVerdict(None)
