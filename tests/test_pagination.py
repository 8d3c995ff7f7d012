"""Every list endpoint pages with limit/offset, tells the total, and costs a fixed number of
queries whatever the page size or the size of the list."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import Engine, event

from tests.helpers import API, PERFECT, PUBLIC_HALF, create_competition, ready_competition, submit
from tests.teams.factories import invitation_id, join


@pytest.fixture
def count_queries(engine: Engine) -> Callable[[], Iterator[list[str]]]:
    @contextmanager
    def counting() -> Iterator[list[str]]:
        statements: list[str] = []

        def listener(_conn, _cursor, statement, _params, _context, _many) -> None:  # type: ignore[no-untyped-def]
            statements.append(statement)

        event.listen(engine, "before_cursor_execute", listener)
        try:
            yield statements
        finally:
            event.remove(engine, "before_cursor_execute", listener)

    return counting


def _get(client, count_queries, path, headers, **params):  # type: ignore[no-untyped-def]
    with count_queries() as statements:
        response = client.get(path, params=params, headers=headers)
    assert response.status_code == 200, response.text
    return response, len(statements)


def _queries_are_fixed(client, count_queries, path, headers, grow, total):  # type: ignore[no-untyped-def]
    """Count queries for small and large pages of a short list, then of a longer one."""
    _, small = _get(client, count_queries, path, headers, limit=2)
    _, whole = _get(client, count_queries, path, headers, limit=500)
    grow()
    response, small_after = _get(client, count_queries, path, headers, limit=2)
    assert int(response.headers["X-Total-Count"]) == total
    assert len(response.json()) == 2
    _, whole_after = _get(client, count_queries, path, headers, limit=500)
    assert small == whole == small_after == whole_after, (small, whole, small_after, whole_after)


def test_competitions_page_and_tell_the_total(client, host, alice, count_queries):
    for i in range(3):
        create_competition(client, host.headers, f"comp-{i}")
    response = client.get(f"{API}/competitions", params={"limit": 2}, headers=alice.headers)
    assert [c["slug"] for c in response.json()] == ["comp-2", "comp-1"]
    assert response.headers["X-Total-Count"] == "3"
    assert 'rel="next"' in response.headers["Link"] and "offset=2" in response.headers["Link"]
    rest = client.get(
        f"{API}/competitions", params={"limit": 2, "offset": 2}, headers=alice.headers
    )
    assert [c["slug"] for c in rest.json()] == ["comp-0"]
    assert 'rel="prev"' in rest.headers["Link"] and 'rel="next"' not in rest.headers["Link"]

    def grow() -> None:
        for i in range(3, 9):
            ready_competition(client, host.headers, f"comp-{i}")

    _queries_are_fixed(client, count_queries, f"{API}/competitions", alice.headers, grow, 9)


@pytest.mark.parametrize("limit,offset", [(0, 0), (501, 0), (10, -1), ("x", 0)])
def test_out_of_bounds_pages_are_422(client, alice, limit, offset):
    response = client.get(
        f"{API}/competitions", params={"limit": limit, "offset": offset}, headers=alice.headers
    )
    assert response.status_code == 422
    assert response.json()["code"] == "validation_error"


def test_the_default_page_is_fifty(client, host, alice):
    for i in range(52):
        create_competition(client, host.headers, f"c{i:02d}")
    response = client.get(f"{API}/competitions", headers=alice.headers)
    assert len(response.json()) == 50 and response.headers["X-Total-Count"] == "52"


@pytest.mark.parametrize("who", ["participant", "organiser"])
def test_a_teams_submissions_page_in_fixed_queries(
    client, host, alice, make_user, count_queries, who
):
    ready_competition(client, host.headers, daily_submission_limit=100)
    for content in (PERFECT, PUBLIC_HALF, PERFECT):
        assert submit(client, alice.headers, content).status_code == 202
    caller = alice if who == "participant" else host
    path = f"{API}/competitions/churn/submissions"
    first = client.get(path, params={"limit": 2}, headers=caller.headers).json()
    everything = client.get(path, headers=caller.headers).json()
    assert first == everything[:2] and len(everything) == 3
    assert all(s["public_score"] is not None for s in everything)

    def grow() -> None:
        # Other teams and users too: the organiser's view names each one.
        for submitter in [alice, alice, *(make_user(f"other{i}") for i in range(3))]:
            assert submit(client, submitter.headers, PUBLIC_HALF).status_code == 202

    total = 5 if who == "participant" else 8
    _queries_are_fixed(client, count_queries, path, caller.headers, grow, total)


def test_the_audit_log_pages_in_fixed_queries(client, host, count_queries):
    create_competition(client, host.headers)
    path = f"{API}/competitions/churn/audit"

    def patch(n: int) -> None:
        for i in range(n):
            response = client.patch(
                f"{API}/competitions/churn", json={"title": f"t{i}"}, headers=host.headers
            )
            assert response.status_code == 200

    patch(3)
    entries = client.get(path, params={"offset": 1, "limit": 1}, headers=host.headers).json()
    assert [e["after"]["title"] for e in entries] == ["t1"]
    _queries_are_fixed(client, count_queries, path, host.headers, lambda: patch(6), 9)


def test_invitations_page_in_fixed_queries(client, host, alice, make_user, count_queries):
    ready_competition(client, host.headers)
    made = iter(range(100))

    def invite(n: int) -> None:
        for _ in range(n):
            leader = make_user(f"leader{next(made)}")
            join(client, leader)
            invitation_id(client, leader, "alice")

    invite(3)
    path = f"{API}/competitions/churn/invitations"
    page = client.get(path, params={"limit": 2}, headers=alice.headers).json()
    assert [i["inviter"] for i in page] == ["leader2", "leader1"]
    _queries_are_fixed(client, count_queries, path, alice.headers, lambda: invite(5), 8)
