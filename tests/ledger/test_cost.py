"""What the record costs the database (issue 43: "at most one INSERT to an upload and to a
score"), counted with SQLAlchemy's cursor events on both databases. The upload's count is pinned
in tests/submissions/test_upload_statements.py; here, a score's, and a batch's, whose entries
share their statements whatever the batch's size. The uploads/s with and without the record are
measured side by side by ``bench/bench_upload.py --record on,off``."""

from app.jobs.score import score_submission, score_submissions
from tests.helpers import PERFECT, PUBLIC_HALF, ready_competition, statements_during, submit
from tests.jobs import conftest as scoring_jobs

# The scoring jobs' server whose uploads wait to be scored by the test, and its queue.
queue = scoring_jobs.queue
unscored = scoring_jobs.unscored


def _ledger(statements: list[str]) -> list[str]:
    return [s for s in statements if "ledger_" in s]


def test_a_score_adds_one_statement_to_the_record(
    unscored, queue, connection, session_factory, settings, host, alice
):
    ready_competition(unscored, host.headers)
    for body in (PERFECT, PUBLIC_HALF):
        assert submit(unscored, alice.headers, body).status_code == 202
    first, second = queue.queued
    score_submission(session_factory, first, settings)
    statements = statements_during(
        connection, lambda: score_submission(session_factory, second, settings)
    )
    # One statement: the entry inserted with the chain's head read (and on PostgreSQL moved)
    # in the same statement.
    (entry,) = _ledger(statements)
    assert entry.startswith(("INSERT INTO ledger_entries", "WITH head AS")), entry


def test_a_failed_score_adds_one_statement_to_the_record(
    unscored, queue, connection, session_factory, settings, host, alice
):
    ready_competition(unscored, host.headers)
    assert submit(unscored, alice.headers, PERFECT).status_code == 202
    assert submit(unscored, alice.headers, b"id,target\nr1,0.5\n").status_code == 202
    first, second = queue.queued
    score_submission(session_factory, first, settings)
    statements = statements_during(
        connection, lambda: score_submission(session_factory, second, settings)
    )
    assert len(_ledger(statements)) == 1, _ledger(statements)


def test_a_batch_of_scores_shares_its_records_statements(
    unscored, queue, connection, session_factory, settings, host, alice, bob, make_user
):
    carol = make_user("carol")
    ready_competition(unscored, host.headers)
    for who in (alice, bob, carol, alice, bob, carol):
        assert submit(unscored, who.headers, PERFECT).status_code == 202
    ids = list(queue.queued)
    statements = statements_during(
        connection, lambda: score_submissions(session_factory, ids, settings)
    )
    ledger = _ledger(statements)
    # The head read (PostgreSQL: locked), every entry in one INSERT, the head moved: fewer
    # than one a score once a batch holds three.
    assert sum(s.startswith("INSERT INTO ledger_entries") for s in ledger) == 1, ledger
    assert len(ledger) <= 3 and len(ledger) < len(ids), ledger
