"""Board pages: pagination with the total, the caller's own row, the CSV download, a fixed number
of queries per page, and standings that always match a rebuild from scratch."""

import csv
import io

import pytest
from sqlalchemy import select, update

from app.leaderboard.standings import rebuild
from app.models import Competition, Standing, Submission
from tests.helpers import API, KEY_ROWS, csv_bytes, ready_competition, statements_during, submit


def _file(a: float, b: float, c: float, private: tuple[float, float, float] = (0.2, 0.7, 0.3)):
    """A submission with these predictions for the public rows a, b, c (a and c are positive)."""
    values = [a, b, c, *private]
    return csv_bytes(
        ["id", "target"], *[[row[0], v] for row, v in zip(KEY_ROWS, values, strict=True)]
    )


def _board(client, caller, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    response = client.get(f"{API}/competitions/churn/leaderboard?{query}", headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture
def field(client, host, make_user):
    """Five teams with distinct public scores, best first: t0 (1.0) ... t4 (0.0)."""
    ready_competition(client, host.headers)
    callers = []
    scores = [(0.9, 0.1, 0.8), (0.9, 0.2, 0.2), (0.5, 0.5, 0.5), (0.1, 0.8, 0.8), (0.1, 0.9, 0.2)]
    for i, values in enumerate(scores):
        caller = make_user(f"t{i}")
        assert submit(client, caller.headers, _file(*values)).status_code == 202
        callers.append(caller)
    return callers


def test_a_page_holds_limit_rows_from_offset_with_the_total(client, field):
    whole = _board(client, field[0])
    assert whole["total"] == 5 and [r["rank"] for r in whole["rows"]] == [1, 2, 3, 4, 5]
    page = _board(client, field[0], limit=2, offset=2)
    assert page["total"] == 5 and page["limit"] == 2 and page["offset"] == 2
    assert [(r["rank"], r["team"]) for r in page["rows"]] == [(3, "t2"), (4, "t3")]
    assert _board(client, field[0], limit=2, offset=4)["rows"][0]["team"] == "t4"
    assert _board(client, field[0], limit=2, offset=10)["rows"] == []


def test_the_callers_own_row_is_there_whatever_the_page(client, field):
    last = _board(client, field[4], limit=2)
    assert [r["team"] for r in last["rows"]] == ["t0", "t1"]
    assert last["own_row"]["team"] == "t4" and last["own_row"]["rank"] == 5
    on_page = _board(client, field[1], limit=2)
    assert on_page["own_row"] == on_page["rows"][1]


def test_callers_without_a_row_get_none(client, field, host, make_user):
    assert _board(client, host, limit=2)["own_row"] is None
    assert _board(client, make_user("newcomer"))["own_row"] is None


@pytest.mark.parametrize("limit, offset", [(0, 0), (1001, 0), (10, -1), ("x", 0)])
def test_bad_page_parameters_are_422(client, field, limit, offset):
    response = client.get(
        f"{API}/competitions/churn/leaderboard?limit={limit}&offset={offset}",
        headers=field[0].headers,
    )
    assert response.status_code == 422


def test_baselines_keep_their_place_but_take_no_rank_across_pages(client, field, host):
    response = client.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("b.csv", _file(0.5, 0.5, 0.5), "text/csv")},
        data={"baseline": "true"},
        headers=host.headers,
    )
    assert response.status_code == 202, response.text
    page = _board(client, field[0], limit=2, offset=2)
    assert [(r["rank"], r["team"], r["baseline"]) for r in page["rows"]] == [
        (3, "t2", False),
        (None, "Baseline", True),  # a baseline without a description
    ]
    assert _board(client, field[0], limit=1, offset=4)["rows"][0]["rank"] == 4


def test_the_whole_board_downloads_as_csv(client, field):
    response = client.get(
        f"{API}/competitions/churn/leaderboard.csv?board=public", headers=field[2].headers
    )
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert "churn-public-leaderboard.csv" in response.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert [(r["rank"], r["team"], r["score"]) for r in rows] == [
        ("1", "t0", "1.0"),
        ("2", "t1", "0.75"),
        ("3", "t2", "0.5"),
        ("4", "t3", "0.25"),
        ("5", "t4", "0.0"),
    ]
    assert rows[0]["entries"] == "1" and rows[0]["baseline"] == "false"


def test_the_private_csv_follows_the_boards_access_rule(client, field, host):
    from datetime import UTC, datetime, timedelta

    client.patch(
        f"{API}/competitions/churn",
        json={"deadline": (datetime.now(UTC) + timedelta(days=1)).isoformat()},
        headers=host.headers,
    )
    url = f"{API}/competitions/churn/leaderboard.csv?board=private"
    assert client.get(url, headers=field[0].headers).status_code == 403
    assert client.get(url, headers=host.headers).status_code == 200


def test_a_board_page_costs_the_same_queries_whatever_the_size(client, host, make_user, connection):
    ready_competition(client, host.headers)
    callers = [make_user(f"u{i}") for i in range(12)]

    def read(limit: int) -> int:
        return len(statements_during(connection, lambda: _board(client, callers[0], limit=limit)))

    submit(client, callers[0].headers, _file(0.9, 0.1, 0.8))
    small = read(100)
    for i, caller in enumerate(callers[1:]):
        submit(client, caller.headers, _file(0.9, 0.1 * (i % 9), 0.8))
        submit(client, caller.headers, _file(0.5, 0.5, 0.5))
    assert read(100) == small
    assert read(3) == small


def test_standings_always_match_a_rebuild_from_scratch(client, host, make_user, session_factory):
    ready_competition(client, host.headers)
    callers = [make_user(f"p{i}") for i in range(4)]
    ids = []
    for i, caller in enumerate(callers):
        for values in [(0.9, 0.1, 0.8), (0.5, 0.5, 0.5), (0.1 * i, 0.5, 0.3)]:
            ids.append(submit(client, caller.headers, _file(*values)).json()["id"])
    client.post(f"{API}/submissions/{ids[1]}/select", headers=callers[0].headers)
    client.post(f"{API}/submissions/{ids[3]}/hide", json={}, headers=host.headers)
    client.post(f"{API}/competitions/churn/bans", json={"team": "p2"}, headers=host.headers)
    client.patch(
        f"{API}/competitions/churn", json={"final_selection_limit": 1}, headers=host.headers
    )
    with session_factory() as session:  # a bulk update through the session is followed too
        session.execute(update(Submission).where(Submission.id == ids[5]).values(selected=True))
        session.commit()

    def snapshot(session):  # type: ignore[no-untyped-def]
        rows = session.execute(
            select(
                Standing.answer_key_id,
                Standing.board,
                Standing.team_id,
                Standing.submission_id,
                Standing.score,
                Standing.entries,
            ).order_by(Standing.answer_key_id, Standing.board, Standing.team_id)
        )
        return [tuple(r) for r in rows]

    with session_factory() as session:
        kept = snapshot(session)
        rebuild(session, session.scalar(select(Competition)))
        assert snapshot(session) == kept
        session.rollback()
    assert {board for _, board, *_ in kept} == {"public", "private"}
    assert len({team for _, _, team, *_ in kept}) == 3  # the banned team left


def test_a_bulk_load_larger_than_one_statements_parameters_keeps_the_standings_true(
    client, host, alice, session_factory
):
    """70,000 scores written in one transaction: more ids than PostgreSQL takes as parameters of
    one statement (65,535), so the standings must look them up in slices."""
    from sqlalchemy import func, insert, literal

    from app.models import AnswerKey, Score, Team
    from app.models.submission import SubmissionStatus

    ready_competition(client, host.headers)
    assert submit(client, alice.headers, _file(0.9, 0.1, 0.8)).status_code == 202
    count = 70_000
    with session_factory() as session:
        competition = session.scalar(select(Competition))
        key = session.scalar(select(AnswerKey).where(AnswerKey.competition_id == competition.id))
        team = session.scalar(select(Team).where(Team.competition_id == competition.id))
        first = session.scalar(select(func.max(Submission.id))) + 1
        template = session.get(Submission, first - 1)
        # The submissions are only the scores' set-up: the database makes them in one
        # INSERT ... SELECT over a counter (70,000 statements through the driver took seconds),
        # and the standings learn of the team from the scores alone.
        numbers = select(literal(0).label("i")).cte("numbers", recursive=True)
        numbers = numbers.union_all(select(numbers.c.i + 1).where(numbers.c.i < count - 1))
        made = {
            "id": numbers.c.i + first,
            "competition_id": literal(competition.id),
            "phase_id": literal(template.phase_id),
            "team_id": literal(team.id),
            "user_id": literal(template.user_id),
            "description": literal(""),
            "filename": literal("sub.csv"),
            "path": literal("sub.csv"),
            "size_bytes": literal(1),
            "sha256": literal("0" * 64),
            "status": literal(SubmissionStatus.scored, Submission.__table__.c.status.type),
            "created_at": literal(template.created_at, Submission.__table__.c.created_at.type),
            "attempts": literal(1),
        }
        session.connection().execute(
            insert(Submission.__table__).from_select(list(made), select(*made.values()))
        )
        assert session.scalar(select(func.count()).select_from(Submission)) == count + 1
        session.execute(
            insert(Score),
            [
                {
                    "submission_id": first + i,
                    "answer_key_id": key.id,
                    "score": 0.5,
                    "public_score": 1.0 if i == count - 1 else 0.5,
                    "private_score": 0.5,
                    "created_at": template.created_at,
                }
                for i in range(count)
            ],
        )
        session.commit()
    board = _board(client, alice)
    assert board["total"] == 1
    assert board["rows"][0]["score"] == 1.0  # the last row written is the team's best
    assert board["rows"][0]["entries"] == count + 1
