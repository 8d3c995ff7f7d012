"""The scoring queue's second step: after a score row is stored and committed, add its bootstrap
intervals, its replicates (for bands and comparisons) and, for the parameter-free Ladder, the
paired standard error against the team's best. It never delays the score and never fails it:
any problem leaves a note for the host instead of an interval.

The Ladder's standard error is exact where the metric decomposes into rows
(:func:`app.honest.engine.paired.paired_se`: s/√n of the per-row loss differences, DeLong's for AUC),
computed from the two submissions' predictions on the public rows; for the other metrics (F1,
precision, recall, κ, pF-beta, several AUC columns) it is the standard deviation of the paired
bootstrap replicates, and without those (intervals off) the Ladder uses its fixed step.
"""

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from sqlalchemy import Integer, bindparam, exists, insert, select
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import after_commit, lock_standings, unit_of_work
from app.evaluation.keys import key_table, stored_predictions
from app.evaluation.metric import is_custom, metric_for
from app.honest.board.board import stats_of, stored_bands
from app.honest.board.codec import from_bytes, to_bytes
from app.honest.board.ladder import best_baseline, history, replay_rows
from app.honest.engine.compare import rank_bands
from app.honest.engine.intervals import bootstrap_interval
from app.honest.engine.paired import paired_se
from app.honest.engine.plans import Plan, make_plan, supports_intervals
from app.honest.engine.replicates import run
from app.honest.engine.resample import Resamples, seed_for
from app.leaderboard.standings import apply_pending, bump_board_revision
from app.models import AnswerKey, BoardBands, Competition, Score, ScoreStats, Standing, Submission
from app.models.types import utcnow
from app.scoring.intake import PRIVATE, PUBLIC, AnswerKeyTable
from app.storage.cache import LocalCache

log = logging.getLogger(__name__)

REPLICATES = 1000
# Resample count matrices kept in memory across submissions (the per-key part), in bytes.
_CACHE_BYTES = 1 << 30
_cache: OrderedDict[tuple[str, str, int], Resamples] = OrderedDict()
_lock = threading.Lock()
# Resample matrices being written to the resample cache, by entry name.
_writing: dict[str, threading.Thread] = {}


def resamples_for(key_sha: str, split: str, n: int, settings: Settings) -> Resamples:
    """The key version's shared resamples of one split.

    Matrices up to half the memory budget are kept in memory while they fit it. Larger ones
    (1 GB per split at 1M rows) are drawn in memory for the first submission against the key
    version and written behind it, while it is computed, to this machine's resample cache
    (under ``resample_cache_bytes``); every later submission maps that file.
    """
    ident = (key_sha, split, n)
    with _lock:
        if ident in _cache:
            _cache.move_to_end(ident)
            return _cache[ident]
    seed = seed_for(key_sha, split)
    resamples = Resamples(n, seed=seed, replicates=REPLICATES)
    if n * REPLICATES > _CACHE_BYTES // 2:
        cache = LocalCache(
            settings.data_dir / "resample-cache", max_bytes=settings.resample_cache_bytes
        )
        name = f"{seed:016x}-{n}x{REPLICATES}.counts"
        with _lock:
            pending = _writing.get(name)
        if pending is not None:
            pending.join()
        found = cache.find(name)
        if found is not None:
            try:
                return resamples.read_from(found)
            except FileNotFoundError:  # evicted by another process in between
                pass
        resamples.materialise()
        _write_behind(cache, name, resamples)
        return resamples
    resamples.materialise()
    with _lock:
        _cache[ident] = resamples
        while sum(r.n * r.replicates for r in _cache.values()) > _CACHE_BYTES:
            _cache.popitem(last=False)
    return resamples


def _write_behind(cache: LocalCache, name: str, resamples: Resamples) -> None:
    """Write the matrix to the cache on a thread of its own (file writes release the GIL)."""

    def write() -> None:
        try:
            cache.get(name, resamples.write)
        except OSError:  # a full disk costs the next submission a redraw, nothing else
            log.warning("could not keep resamples %s in the resample cache", name, exc_info=True)
        finally:
            with _lock:
                _writing.pop(name, None)

    thread = threading.Thread(target=write, name=f"resamples-{name[:8]}", daemon=True)
    with _lock:
        _writing[name] = thread
    thread.start()


def wait_for_writes() -> None:
    """Block until every resample matrix being written to the cache is there (tests, benches)."""
    with _lock:
        pending = list(_writing.values())
    for thread in pending:
        thread.join()


@dataclass(frozen=True)
class StatsJob:
    score_id: int
    competition: Competition  # detached copy of the settings the job reads
    key: AnswerKey
    submission_path: str
    team_id: int
    submission_id: int


def stats_job(submission: Submission, competition: Competition, key: AnswerKey) -> StatsJob | None:
    """The stats job of a submission about to be scored, as transient copies (no session), or
    None when its competition keeps no stats. Its score row's id is filled in when written."""
    if not competition.score_intervals and competition.public_board_mode != "ladder_free":
        return None
    copy = Competition(
        id=competition.id,
        metric_name=competition.metric_name,
        metric_params=dict(competition.metric_params or {}),
        id_column=competition.id_column,
        custom_metric_path=competition.custom_metric_path,
        custom_metric_direction=competition.custom_metric_direction,
        score_intervals=competition.score_intervals,
        public_board_mode=competition.public_board_mode,
    )
    key_copy = AnswerKey(
        id=key.id,
        path=key.path,
        sha256=key.sha256,
        phase_id=key.phase_id,
        # Fixed for a key version: what the Ladder's replay reads of it.
        n_rows=key.n_rows,
        n_public=key.n_public,
    )
    path = submission.output_path or submission.path
    return StatsJob(0, copy, key_copy, path, submission.team_id, submission.id)


def _claim(factory: sessionmaker[Session], submission_id: int, key_id: int) -> StatsJob | None:
    with unit_of_work(factory) as session:
        score = session.scalar(
            select(Score).where(Score.submission_id == submission_id, Score.answer_key_id == key_id)
        )
        if score is None or score.public_score is None and score.private_score is None:
            return None
        if session.scalar(select(ScoreStats.id).where(ScoreStats.score_id == score.id)):
            return None
        submission = session.get(Submission, submission_id)
        competition = session.get(Competition, submission.competition_id) if submission else None
        key = session.get(AnswerKey, key_id)
        if submission is None or competition is None or key is None:
            return None
        if submission.phase is not None and submission.phase.tasks:
            # A multi-task row is several tasks' files and keys: no one bootstrap reads it.
            return None
        # The parameter-free Ladder needs its threshold even when intervals are off.
        if not competition.score_intervals and competition.public_board_mode != "ladder_free":
            return None
        session.expunge(competition)
        session.expunge(key)
        # A code submission's predictions are the file its run wrote, not its code.
        predictions = submission.output_path or submission.path
        return StatsJob(score.id, competition, key, predictions, submission.team_id, submission_id)


def _split_masks(usage: np.ndarray | None, n: int) -> dict[str, np.ndarray]:
    if usage is None:
        everything = np.ones(n, dtype=bool)
        return {"public": everything, "private": everything}
    return {"public": usage == PUBLIC, "private": usage == PRIVATE}


@dataclass(frozen=True)
class _Computed:
    intervals: dict[str, dict[str, float | int]]
    replicates: dict[str, bytes]
    public_plan: Plan | None  # for the Ladder's paired standard error


def _plan(
    job: StatsJob, table: AnswerKeyTable, path: str, settings: Settings, masks: list[np.ndarray]
) -> list[Plan]:
    """One submission's plans on these rows of the key (the file read once)."""
    metric = metric_for(job.competition)
    params = metric.parse_params(job.competition.metric_params)
    y_pred = stored_predictions(path, table=table, metric=metric, settings=settings)
    return [make_plan(metric.name, params, table.y_true[m], y_pred[m]) for m in masks]


def _compute(job: StatsJob, settings: Settings) -> _Computed:
    table = key_table(job.competition, job.key, settings)
    intervals: dict[str, dict[str, float | int]] = {}
    replicates: dict[str, bytes] = {}
    splits = {
        split: mask
        for split, mask in _split_masks(table.usage, table.n_rows).items()
        if np.count_nonzero(mask) >= 2 and (split == "public" or job.competition.score_intervals)
    }
    plans = dict(
        zip(
            splits,
            _plan(job, table, job.submission_path, settings, list(splits.values())),
            strict=True,
        )
    )
    if job.competition.score_intervals:
        for split, plan in plans.items():
            rep = run(plan, resamples_for(job.key.sha256, split, plan.n, settings))
            intervals[split] = bootstrap_interval(rep).as_dict()
            replicates[split] = to_bytes(rep.values)
    return _Computed(intervals, replicates, plans.get("public"))


def _ladder_thresholds(
    session: Session,
    entries: list[tuple[StatsJob, "Stats"]],
    competition: Competition,
    settings: Settings,
) -> list[float | None]:
    """Each new score's Ladder threshold, for scores on one key version written together in
    submission order (one, or a scorer's batch): the standard error of (the submission − its
    team's best so far) on the public split, exact from both submissions' rows where the metric
    allows, else from the shared bootstrap replicates; 0 for a first submission with no
    baseline, None when neither is available. The teams' histories are read once; each score
    is replayed after the thresholds of the batch's earlier ones, as if written one by one."""
    asked = [job for job, stats in entries if stats.computed.public_plan is not None]
    if not asked:
        return [None] * len(entries)
    rows = history(
        session, competition=competition, key=asked[0].key, team_ids={j.team_id for j in asked}
    )
    # Each score replays its own team's rows after the baselines (the Ladder's start), not the
    # whole batch's: a batch of teams costs each of them its own history only.
    baselines = [row for row in rows if row.baseline]
    by_team: dict[int, list[Any]] = {}
    for row in rows:
        if not row.baseline:
            by_team.setdefault(row.team_id, []).append(row)
    written: dict[int, float | None] = {}
    thresholds = []
    for job, stats in entries:
        threshold = None
        if stats.computed.public_plan is not None:
            team_rows = baselines + by_team.get(job.team_id, [])
            threshold = _threshold(
                session, job, competition, stats.computed, settings, team_rows, written
            )
        written[job.submission_id] = threshold
        thresholds.append(threshold)
    return thresholds


def _threshold(
    session: Session,
    job: StatsJob,
    competition: Competition,
    computed: "_Computed",
    settings: Settings,
    rows: list[Any],
    written: dict[int, float | None],
) -> float | None:
    # ``rows``: the baselines and this team's history, in submission order each.
    # The team's next Ladder step is compared with its last release, else the best visible
    # baseline. This score has no stats row yet, so the replay leaves it pending: the best is
    # among the earlier.
    ladders = replay_rows(
        rows,
        competition=competition,
        key=job.key,
        team_ids={job.team_id},
        mode="ladder_free",
        thresholds=written,
    )
    ladder = ladders.get(job.team_id)
    best_id = ladder.state.best if ladder is not None else None
    best = (
        next((row for row in rows if row.id == best_id), None) if isinstance(best_id, int) else None
    )
    if best is None:
        best = best_baseline(rows, competition)
    if best is None:
        return 0.0
    assert computed.public_plan is not None
    if best.predictions is not None:
        table = key_table(job.competition, job.key, settings)
        mask = _split_masks(table.usage, table.n_rows)["public"]
        try:
            [best_plan] = _plan(job, table, best.predictions, settings, [mask])
        except Exception:  # noqa: BLE001 - a file gone since: the bootstrap answers instead
            log.warning("submission %s: cannot reread submission %s", job.submission_id, best.id)
        else:
            exact = paired_se(competition.metric_name, computed.public_plan, best_plan)
            if exact is not None and np.isfinite(exact):
                return exact
    new = from_bytes(computed.replicates.get("public"))
    other = session.scalar(
        select(ScoreStats.public_replicates)
        .join(Score, Score.id == ScoreStats.score_id)
        .where(Score.submission_id == best.id, Score.answer_key_id == job.key.id)
    )
    base = from_bytes(other)
    if new is None or base is None or base.shape != new.shape:
        return None
    diff = new - base
    diff = diff[np.isfinite(diff)]
    return float(diff.std(ddof=1)) if diff.size > 1 else None


# Built once: the scorer runs it after every score.
_STANDS = select(Standing.id).where(
    Standing.answer_key_id == bindparam("key_id", type_=Integer),
    Standing.submission_id == bindparam("submission_id", type_=Integer),
)
_ANY_STANDS = (
    select(Standing.id)
    .where(
        Standing.answer_key_id == bindparam("key_id", type_=Integer),
        Standing.submission_id.in_(bindparam("submission_ids", expanding=True)),
    )
    .limit(1)
)


def compute_stats(job: StatsJob, settings: Settings) -> "Stats":
    """What needs no database: the intervals and replicates of the submission's splits."""
    if is_custom(job.competition) or not supports_intervals(job.competition.metric_name):
        return Stats(_Computed({}, {}, None), "this metric has no bootstrap interval")
    try:
        return Stats(_compute(job, settings), None)
    except Exception as exc:  # noqa: BLE001 - the score stands; the host gets a note
        log.exception("intervals for submission %s failed", job.submission_id)
        return Stats(_Computed({}, {}, None), f"intervals failed: {type(exc).__name__}"[:200])


@dataclass(frozen=True)
class Stats:
    computed: _Computed
    note: str | None


# Keys up to this many rows have their stats computed beside the score and written in the
# score's own transaction (a 100-row key's intervals take ~4 ms of CPU, less than the second
# step's own transactions and re-reading the file took). Larger keys keep the second step, so
# a long bootstrap never delays a score.
INLINE_ROWS = 20_000


def inline_stats(job: StatsJob, settings: Settings) -> Stats | None:
    """The stats to write with the score, for a small key; None when the second step does it."""
    try:
        table = key_table(job.competition, job.key, settings)
    except Exception:  # noqa: BLE001 - the second step says what is wrong
        return None
    return compute_stats(job, settings) if table.n_rows <= INLINE_ROWS else None


def write_stats(
    session: Session,
    job: StatsJob,
    stats: Stats,
    settings: Settings,
    *,
    new_score: bool = False,
    competition: Competition | None = None,
) -> None:
    """Store the stats row with the Ladder's threshold, in the caller's transaction; nothing when
    the row is there already (``new_score``: the score row was written in this transaction, so
    it cannot have one). ``competition``: as the caller read it in this transaction (a
    transient copy will do), else loaded."""
    if not new_score and session.scalar(
        select(ScoreStats.id).where(ScoreStats.score_id == job.score_id)
    ):
        return
    if competition is None:
        competition = session.get(Competition, job.competition.id)
    write_new_stats(session, [(job, stats)], settings, competition=competition)


def write_new_stats(
    session: Session,
    entries: list[tuple[StatsJob, Stats]],
    settings: Settings,
    *,
    competition: Competition | None,
) -> None:
    """Store the stats rows of scores written in this transaction (of one competition, in
    submission order), with their Ladder thresholds, in one statement."""
    by_key: dict[int, list[tuple[StatsJob, Stats]]] = {}
    for entry in entries:
        by_key.setdefault(entry[0].key.id, []).append(entry)
    rows = []
    for same_key in by_key.values():
        thresholds: list[float | None] = [None] * len(same_key)
        if competition is not None:
            thresholds = _ladder_thresholds(session, same_key, competition, settings)
        for (job, stats), threshold in zip(same_key, thresholds, strict=True):
            computed = stats.computed
            rows.append(
                {
                    "score_id": job.score_id,
                    "public_interval": computed.intervals.get("public"),
                    "private_interval": computed.intervals.get("private"),
                    "public_replicates": computed.replicates.get("public"),
                    "private_replicates": computed.replicates.get("private"),
                    "ladder_threshold": threshold,
                    "note": stats.note,
                }
            )
    # A Core statement on the session's connection: nobody reads the rows back in this session
    # and no board hook looks at stats rows, so the ORM's flush would be bookkeeping only.
    session.connection().execute(_INSERT_STATS, rows)


_INSERT_STATS = insert(ScoreStats)


def add_score_stats(
    factory: sessionmaker[Session], submission_id: int, key_id: int, settings: Settings
) -> None:
    """Compute and store the stats of one score row; safe to run twice, never raises."""
    try:
        job = _claim(factory, submission_id, key_id)
        if job is None:
            return
        stats = compute_stats(job, settings)
        with unit_of_work(factory) as session:
            write_stats(session, job, stats, settings)
        _refresh_bands(factory, job, settings)
    except Exception:  # noqa: BLE001 - never let the second step hurt the queue
        log.exception("score stats for submission %s failed", submission_id)


def _refresh_bands(factory: sessionmaker[Session], job: StatsJob, settings: Settings) -> None:
    try:
        with unit_of_work(factory) as session:
            refresh_bands_after(session, job, factory=factory, every=settings.bands_every_seconds)
    except Exception:  # noqa: BLE001 - a concurrent refresh won, or the board moved on
        log.warning("bands after submission %s not refreshed", job.submission_id, exc_info=True)


def refresh_bands_after(
    session: Session,
    job: StatsJob,
    *,
    factory: sessionmaker[Session],
    every: float,
    competition: Competition | None = None,
    published: bool | None = None,
) -> None:
    """The boards' rank bands with this score in them. On the published key version only when
    the submission stands on a board (most do not beat their team's best), at most once per
    ``every`` seconds (a later change in the interval is folded into one refresh at its end); on
    a version being rescored, once, when its last submission is scored, so the bands are there
    on publishing.

    ``competition`` (a transient copy will do) and ``published`` (whether the job's key is its
    phase's published version) as the caller read them in this transaction, else loaded."""
    refresh_bands_after_all(
        session, [job], factory=factory, every=every, competition=competition, published=published
    )


def refresh_bands_after_all(
    session: Session,
    jobs: list[StatsJob],
    *,
    factory: sessionmaker[Session],
    every: float,
    competition: Competition | None = None,
    published: bool | None = None,
) -> None:
    """:func:`refresh_bands_after` for several scores on one key version, written together (a
    scorer's batch): one refresh when any of them stands."""
    job = jobs[0]
    if competition is None:
        competition = session.get(Competition, job.competition.id)
    if competition is None or not competition.score_intervals:
        return
    if published is None:
        # Each phase has its own keys: the published one is the key's phase's.
        key = session.get(AnswerKey, job.key.id)
        if key is None:
            return
        board_key = key.phase.board_key
        published = board_key is not None and board_key.id == job.key.id
    if published:
        apply_pending(session)
        if len(jobs) == 1:
            stands = session.scalar(
                _STANDS, {"key_id": job.key.id, "submission_id": job.submission_id}
            )
        else:
            stands = session.scalar(
                _ANY_STANDS,
                {"key_id": job.key.id, "submission_ids": [each.submission_id for each in jobs]},
            )
        if stands is None:
            return
        delay = bands_pacer.now_or_later(job.key.id, every)
        if delay is None:  # a refresh is due already: it will see this standing
            return
        if delay > 0:
            competition_id, key_id = competition.id, job.key.id
            # Started once this transaction has committed, so the refresh reads its standing.
            after_commit(
                session,
                lambda: bands_pacer.schedule(
                    key_id, delay, lambda: _refresh_later(factory, competition_id, key_id)
                ),
            )
            return
    else:
        unscored = session.scalar(
            select(Submission.id)
            .where(
                Submission.phase_id == job.key.phase_id,
                ~exists().where(
                    Score.submission_id == Submission.id,
                    Score.answer_key_id == job.key.id,
                ),
            )
            .limit(1)
        )
        if unscored is not None:
            return
    refresh_bands(session, competition=competition, key_id=job.key.id)


def _refresh_later(factory: sessionmaker[Session], competition_id: int, key_id: int) -> None:
    """A paced refresh, in a transaction of its own; never raises (it runs on a timer)."""
    try:
        with unit_of_work(factory) as session:
            competition = session.get(Competition, competition_id)
            if competition is None or not competition.score_intervals:
                return
            lock_standings(session, competition_id)  # the boards' writers, one at a time
            refresh_bands(session, competition=competition, key_id=key_id)
            bump_board_revision(session, competition_id)  # rendered boards show the new bands
    except Exception:  # noqa: BLE001 - the next score that moves the board refreshes them
        log.warning("paced bands refresh of key %s failed", key_id, exc_info=True)


class _Timer(Protocol):
    daemon: bool

    def start(self) -> None: ...

    def join(self) -> None: ...


class BandsPacer:
    """When each key version's bands were last refreshed in this process, and the one refresh
    waiting for the end of its interval. The clock and the timer are given by a test that moves
    time itself (tests/jobs/test_bands_pacing.py), instead of waiting on it."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        timer: Callable[[float, Callable[[], None]], _Timer] = threading.Timer,
    ) -> None:
        self._lock = threading.Lock()
        self._last: dict[int, float] = {}
        self._waiting: dict[int, _Timer] = {}
        self._clock = clock
        self._timer = timer

    def now_or_later(self, key_id: int, every: float) -> float | None:
        """0 to refresh now (counted as done now), the delay to refresh after, or None when a
        refresh is waiting already."""
        with self._lock:
            if key_id in self._waiting:
                return None
            at = self._clock()
            last = self._last.get(key_id)
            if every <= 0 or last is None or at - last >= every:
                self._last[key_id] = at
                return 0.0
            return last + every - at

    def schedule(self, key_id: int, delay: float, refresh: Callable[[], None]) -> None:
        def run() -> None:
            with self._lock:
                self._waiting.pop(key_id, None)
                self._last[key_id] = self._clock()
            refresh()

        timer = self._timer(delay, run)
        timer.daemon = True
        with self._lock:
            if key_id in self._waiting:
                return
            self._waiting[key_id] = timer
        timer.start()

    def wait(self) -> None:
        """Return when every waiting refresh has run (tests, benches)."""
        with self._lock:
            waiting = list(self._waiting.values())
        for timer in waiting:
            timer.join()


bands_pacer = BandsPacer()


# Bands cover a board's best this many ranked rows (Holm within them; the rest show none).
BAND_TEAMS = 5000


def board_bands(
    session: Session, *, competition: Competition, key_id: int, board: str
) -> dict[str, int]:
    """The bands of the board's best :data:`BAND_TEAMS` ranked rows that have replicates."""
    apply_pending(session)
    rows = session.execute(
        select(Standing.submission_id, Standing.score)
        .where(
            Standing.answer_key_id == key_id,
            Standing.board == board,
            Standing.baseline.is_(False),
        )
        .order_by(
            Standing.order_key, Standing.tie_key, Standing.submitted_at, Standing.submission_id
        )
        .limit(BAND_TEAMS)
    ).all()
    found = stats_of(session, key_id=key_id, submission_ids=[r.submission_id for r in rows])
    ranked = []
    for sid, score in rows:
        reps = from_bytes(getattr(found[sid], f"{board}_replicates")) if sid in found else None
        if reps is not None:
            ranked.append((sid, score, reps))
    if len({r[2].size for r in ranked}) > 1:
        return {}
    if len(ranked) == 1:
        return {str(ranked[0][0]): 1}  # nobody can be better
    if not ranked:
        return {}
    bands = rank_bands(
        np.array([r[1] for r in ranked]),
        np.stack([r[2] for r in ranked]),
        greater_is_better=metric_for(competition).greater_is_better,
    )
    return {str(sid): int(band) for (sid, _, _), band in zip(ranked, bands, strict=True)}


def refresh_bands(session: Session, *, competition: Competition, key_id: int) -> None:
    """Recompute and store both boards' bands of one key version."""
    for board in ("public", "private"):
        bands = board_bands(session, competition=competition, key_id=key_id, board=board)
        stored = stored_bands(session, key_id=key_id, board=board)
        if stored is None:
            session.add(
                BoardBands(answer_key_id=key_id, board=board, bands=bands, teams=len(bands))
            )
        else:
            stored.bands, stored.teams, stored.computed_at = bands, len(bands), utcnow()
