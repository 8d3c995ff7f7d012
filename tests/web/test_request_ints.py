"""Integers in the pages' paths, queries and forms are range-checked like the API's: a number no
row can have is a 422, never a 500 from an integer overflow in the database driver (SQLite and
PostgreSQL both refuse a Python int past 64 bits)."""

import pytest

from tests.helpers import API, ready_competition

HUGE = ("99999999999999999999", str(2**63), str(2**31))
LARGEST = 2**31 - 1


@pytest.fixture
def signed_in(client, person, browser):  # type: ignore[no-untyped-def]
    host = person("host", organiser=True)
    ready_competition(client, host.headers)
    alice = person("alice")
    assert client.post(f"{API}/competitions/churn/join", headers=alice.headers).status_code == 201
    return browser("host"), browser("alice")


@pytest.mark.parametrize(
    "path", ["/c/churn/leaderboard?page={n}", "/c/churn/leaderboard?board=private&page={n}"]
)
def test_a_board_page_number_is_bounded(client, signed_in, path):
    for n in HUGE:
        assert client.get(path.format(n=n)).status_code == 422, n
    assert client.get(path.format(n=LARGEST)).status_code == 200


def test_the_hosts_submission_list_page_number_is_bounded(signed_in):
    host, _ = signed_in
    for n in HUGE:
        assert host.get(f"/c/churn/host/submissions?page={n}").status_code == 422, n
    assert host.get(f"/c/churn/host/submissions?page={LARGEST}").status_code == 200


@pytest.mark.parametrize(
    ("who", "path", "page"),
    [
        ("alice", "/c/churn/submissions/{n}/select", "/c/churn/submissions"),
        ("alice", "/c/churn/team/invitations/{n}/withdraw", "/c/churn/team"),
        ("alice", "/c/churn/invitations/{n}/accept", "/c/churn/team"),
        ("alice", "/c/churn/invitations/{n}/decline", "/c/churn/team"),
        ("alice", "/account/tokens/{n}/revoke", "/account/tokens"),
        ("host", "/c/churn/host/submissions/{n}/hide", "/c/churn/host/submissions"),
    ],
)
def test_an_id_in_a_form_route_is_bounded(signed_in, who, path, page):
    web = signed_in[0] if who == "host" else signed_in[1]
    for n in HUGE:
        response = web.post(path.format(n=n), page=page)
        assert response.status_code == 422, (n, response.text[:300])
    # The largest id any row can have is simply not found (a redirect back with the message).
    response = web.post(path.format(n=LARGEST), page=page)
    assert response.status_code in (303, 404), response.text[:300]


def test_an_id_in_a_host_page_path_is_bounded(signed_in):
    host, _ = signed_in
    for n in HUGE:
        assert host.get(f"/c/churn/host/submissions/{n}").status_code == 422, n
    assert host.get(f"/c/churn/host/submissions/{LARGEST}").status_code == 404
