"""A bundle's competition made publishable as its platform ran it, and the warnings that name
what a host may want to change, each with its fix.

Pure: it takes the reader's model and the time of the import, and gives the model back with its
quotas fitted to what Podium holds and, when the host asks (``--start-now``), every date moved by
one offset so that the first phase opens now. Nothing here refuses a bundle: what its platform
accepts, Podium publishes unedited.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from app.bundles.model import NO_DAILY_LIMIT, Competition, Phase

# The most a phase's quotas hold (app.competitions.schemas.PhaseConfig).
MAX_TOTAL = 2**31 - 1


def _fix(slug: str, phase: str, what: str) -> str:
    return (
        f"`podium competitions phase {slug} {phase} {what}`, or the phase's row on the Settings tab"
    )


def _fit_quotas(phase: Phase, warnings: list[str]) -> Phase:
    daily, total = phase.daily_submission_limit, phase.total_submission_limit
    if daily is not None and daily > NO_DAILY_LIMIT:
        # EvalAI's default quota is 100,000 a day: no limit in practice.
        warnings.append(
            f"phase '{phase.name}' allows {daily:,} submissions a day; imported as "
            f"{NO_DAILY_LIMIT:,} (Podium's most: no limit in practice)"
        )
        daily = NO_DAILY_LIMIT
    if total is not None and total > MAX_TOTAL:
        total = None
    if total == 0:
        total = None
    return replace(phase, daily_submission_limit=daily, total_submission_limit=total)


def shift(competition: Competition, offset: timedelta) -> Competition:
    """Every phase's start and end moved by ``offset``."""
    return replace(
        competition,
        phases=tuple(
            replace(
                p,
                start=None if p.start is None else p.start + offset,
                end=None if p.end is None else p.end + offset,
            )
            for p in competition.phases
        ),
    )


def as_came(
    competition: Competition, *, now: datetime, slug: str, start_now: bool = False
) -> Competition:
    """The competition to make, its warnings completed with the date notes and their fixes."""
    warnings = list(competition.warnings)
    phases = tuple(_fit_quotas(p, warnings) for p in competition.phases)
    competition = replace(competition, phases=phases)
    starts = [p.start for p in phases if p.start is not None]
    if start_now and starts:
        offset = now.replace(microsecond=0) - min(starts)
        competition = shift(competition, offset)
        days = offset.total_seconds() / 86_400
        warnings.append(
            f"--start-now: every date moved by {days:+,.1f} days so that the first phase opens "
            "now; phases keep their lengths and their gaps"
        )
    phases = competition.phases
    ends = [p.end for p in phases]
    if phases and all(e is not None and e <= now for e in ends):
        last = max(e for e in ends if e is not None)
        warnings.append(
            f"its dates are past (its last phase ended {last.isoformat()}): it publishes as an "
            "ended competition, where an upload is late (scored, shown to its team, unranked); "
            "to run it again, import it with --start-now (the import page's box), or move the "
            "phases' windows: " + _fix(slug, phases[-1].name, "--start DATE --end DATE")
        )
    for phase in phases:
        if phase.end is None:
            warnings.append(
                f"phase '{phase.name}' has no end: it is open until a host ends it ("
                + _fix(slug, phase.name, "--end DATE")
                + ")"
            )
    ordered = [p for p in phases if p.start is not None]
    for before, after in zip(ordered, ordered[1:], strict=False):
        if after.start < before.start:  # type: ignore[operator]
            warnings.append(
                f"phase '{after.name}' starts before phase '{before.name}', as the bundle says: "
                "phases may run in any order and overlap, and while several are open an upload "
                "names its phase"
            )
    for phase in phases:
        if phase.daily_submission_limit == 0:
            warnings.append(
                f"phase '{phase.name}' takes no submissions of its own (a daily limit of 0, as "
                "CodaLab reads it); to open it to uploads: "
                + _fix(slug, phase.name, "--daily-limit N")
            )
    return replace(competition, warnings=tuple(dict.fromkeys(warnings)))
