"""The SQL statements one scoring job of a small upload costs (issue 23), counted with
SQLAlchemy's cursor events, on both databases, score intervals on (the default).

Where they go: the claim (the plan's narrow row, the lease's UPDATE); the settle (the
submission's UPDATE returning what the rest reads, the score's INSERT; the team's standings:
PostgreSQL's standings lock, DELETE, INSERT … SELECT, the board revision; the stats in a
savepoint: the team's Ladder history with its best's file and, where the paired standard error
is not exact, its best's replicates, the stats' INSERT, whether the submission stands). The entity-loading claim and settle sent the same kinds of statements but
loaded and flushed entities for them (20.9 ms of CPU a job, 12.7 after, in process).
"""

from sqlalchemy import select

from app.jobs import score as jobs
from app.jobs.score import score_submission
from app.models import Score, ScoreStats, Standing, Submission, SubmissionStatus
from tests.helpers import PERFECT, PUBLIC_HALF, ready_competition, statements_during, submit

# What it costs now, without the test's savepoints: a change that adds a statement fails here.
# Issue 40 added one on purpose: the outcome's event row (submission.scored or .failed), written
# in the settling transaction (the transactional outbox), one INSERT for a batch's outcomes.
# Issue 43 added one more: the record's entry of the score. (11 and 12 before both.)
TODAY = {"sqlite": 11 + 2, "postgresql": 12 + 2}


def test_a_small_uploads_scoring_costs_no_more_statements_than_today(
    unscored, queue, connection, session_factory, settings, host, alice
):
    ready_competition(unscored, host.headers)
    # The second has a best to be compared with, and does not beat it (as most do not): no
    # bands refresh, which is paced and counted apart (app.jobs.honest.refresh_bands_after).
    for body in (PERFECT, PUBLIC_HALF):
        assert submit(unscored, alice.headers, body).status_code == 202
    first, second = queue.queued
    score_submission(session_factory, first, settings)
    statements = statements_during(
        connection, lambda: score_submission(session_factory, second, settings)
    )
    shown = "\n".join(s[:300] for s in statements)
    assert len(statements) <= TODAY[connection.dialect.name], shown
    # No entity of the competition is loaded on the way (an entity's row has every column, its
    # slug among them): what the job reads of it comes in narrow rows.
    assert not any("competitions_1.slug" in s or "competitions.slug" in s for s in statements)
    with session_factory() as session:
        submission = session.get(Submission, second)
        assert submission is not None and submission.status == SubmissionStatus.scored
        score = session.scalar(select(Score).where(Score.submission_id == second))
        assert score is not None and score.public_score == 0.5
        # The stats were written beside it, with the Ladder's threshold against the first.
        stats = session.scalar(select(ScoreStats).where(ScoreStats.score_id == score.id))
        assert stats is not None and stats.public_interval and stats.ladder_threshold is not None
        # And the team's standing stayed with the first.
        public = session.scalar(
            select(Standing.submission_id).where(
                Standing.submission_id.in_([first, second]), Standing.board == "public"
            )
        )
        assert public == first


def test_the_narrow_claim_plans_as_the_general_one_does(
    unscored, queue, session_factory, settings, host, alice, monkeypatch
):
    # The same upload twice: one claimed the general way (entities loaded), one the narrow way.
    ready_competition(unscored, host.headers)
    for _ in range(2):
        assert submit(unscored, alice.headers, PERFECT).status_code == 202
    general_id, narrow_id = queue.queued
    with monkeypatch.context() as patched:
        patched.setattr(jobs, "_claim_queued_upload", lambda *_args: jobs._ANOTHER_CASE)
        general = jobs._claim(session_factory, general_id, settings)
    narrow = jobs._claim(session_factory, narrow_id, settings)
    assert general is not None and narrow is not None
    assert narrow.plan == general.plan  # the file is stored once, by its content
    assert (narrow.key_id, narrow.time_limit, narrow.hold_for, narrow.lease.attempt) == (
        general.key_id,
        general.time_limit,
        general.hold_for,
        general.lease.attempt,
    )
    assert narrow.stats is not None and general.stats is not None
    for field in ("metric_name", "metric_params", "score_intervals", "public_board_mode", "id"):
        assert getattr(narrow.stats.competition, field) == getattr(general.stats.competition, field)
    for field in ("id", "path", "sha256", "phase_id", "n_rows", "n_public"):
        assert getattr(narrow.stats.key, field) == getattr(general.stats.key, field)
    assert narrow.stats.team_id == general.stats.team_id
    assert (narrow.stats.submission_id, general.stats.submission_id) == (narrow_id, general_id)


def test_what_the_narrow_claim_does_not_take_the_general_one_does(
    unscored, queue, session_factory, settings, host, alice
):
    # A last attempt is the general claim's: it gives up, refunded, with the reason.
    ready_competition(unscored, host.headers)
    assert submit(unscored, alice.headers, PERFECT).status_code == 202
    [submission_id] = queue.queued
    with session_factory() as session:
        submission = session.get(Submission, submission_id)
        assert submission is not None
        submission.attempts = settings.scoring_max_attempts
        session.commit()
    assert jobs._claim(session_factory, submission_id, settings) is None
    with session_factory() as session:
        submission = session.get(Submission, submission_id)
        assert submission is not None
        assert submission.status == SubmissionStatus.failed and submission.refunded
