"""Integer ids in paths are bounded: a number no row can have is 422 (or 404), never a 500 from
an integer overflow in the database."""

import pytest

from tests.helpers import API, ready_competition

ID_ROUTES = [
    ("GET", "/submissions/{id}"),
    ("GET", "/submissions/{id}/file"),
    ("GET", "/submissions/{id}/scores"),
    ("POST", "/submissions/{id}/select"),
    ("DELETE", "/submissions/{id}/select"),
    ("POST", "/submissions/{id}/hide"),
    ("DELETE", "/submissions/{id}/hide"),
    ("GET", "/submissions/{id}/log"),
    ("POST", "/submissions/{id}/rerun"),
    ("DELETE", "/competitions/churn/team/invitations/{id}"),
    ("POST", "/invitations/{id}/accept"),
    ("POST", "/invitations/{id}/decline"),
    ("DELETE", "/auth/tokens/{id}"),
    ("GET", "/submissions/{id}/episodes"),
    ("GET", "/episodes/{id}"),
    ("GET", "/episodes/{id}/logs/0"),
    ("GET", "/competitions/churn/submissions/{id}/code"),
]
# Routes that read a file: tried with one, so that the id is what is judged.
FILE_ID_ROUTES = [("PUT", "/competitions/churn/submissions/{id}/code")]


def test_every_integer_path_parameter_is_bounded(client):
    checked = 0
    for path, operations in client.app.openapi()["paths"].items():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                schema = parameter["schema"]
                if parameter["in"] == "path" and schema.get("type") == "integer":
                    assert schema.get("minimum") == 1, (path, parameter["name"])
                    assert schema.get("maximum") == 2**31 - 1, (path, parameter["name"])
                    checked += 1
    assert checked == len(ID_ROUTES) + len(GUARDED_ID_ROUTES) + len(FILE_ID_ROUTES)


@pytest.mark.parametrize(("method", "path"), FILE_ID_ROUTES)
def test_out_of_range_ids_with_a_file_are_422_and_the_largest_id_is_404(
    client, host, alice, method, path
):
    ready_competition(client, host.headers)
    assert client.post(f"{API}/competitions/churn/join", headers=alice.headers).status_code == 201
    files = {"file": ("main.py", b"print(1)\n", "text/x-python")}
    for bad in ("99999999999999999999999", str(2**31), "-1", "0", "12abc"):
        response = client.request(
            method, API + path.format(id=bad), headers=alice.headers, files=files
        )
        assert response.status_code == 422, (bad, response.text)
    response = client.request(
        method, API + path.format(id=2**31 - 1), headers=alice.headers, files=files
    )
    assert response.status_code == 404, response.text


@pytest.mark.parametrize(("method", "path"), ID_ROUTES)
def test_out_of_range_ids_are_422_and_the_largest_id_is_404(client, host, alice, method, path):
    ready_competition(client, host.headers)
    assert client.post(f"{API}/competitions/churn/join", headers=alice.headers).status_code == 201
    for caller in (host, alice):
        for bad in ("99999999999999999999999", str(2**31), "-1", "0", "12abc"):
            response = client.request(method, API + path.format(id=bad), headers=caller.headers)
            assert response.status_code == 422, (bad, response.text)
        response = client.request(method, API + path.format(id=2**31 - 1), headers=caller.headers)
        assert response.status_code == 404, response.text


# Routes whose caller is checked before the path (a competition's hosts, the site's admins):
# the one who may call it gets 422 or 404, anyone else 403 (or 422), never a 500.
GUARDED_ID_ROUTES = [
    ("GET", "/competitions/churn/webhooks/{id}/deliveries", "host"),
    ("POST", "/competitions/churn/webhooks/{id}/enable", "host"),
    ("DELETE", "/competitions/churn/webhooks/{id}", "host"),
    ("DELETE", "/admin/invitations/{id}", "admin"),
]


@pytest.mark.parametrize(("method", "path", "who"), GUARDED_ID_ROUTES)
def test_out_of_range_ids_behind_a_guard(client, host, alice, make_user, method, path, who):
    ready_competition(client, host.headers)
    allowed = host if who == "host" else make_user("root", admin=True)
    for bad in ("99999999999999999999999", str(2**31), "-1", "0", "12abc"):
        response = client.request(method, API + path.format(id=bad), headers=allowed.headers)
        assert response.status_code == 422, (bad, response.text)
        other = client.request(method, API + path.format(id=bad), headers=alice.headers)
        assert other.status_code in (403, 422), (bad, other.text)
    response = client.request(method, API + path.format(id=2**31 - 1), headers=allowed.headers)
    assert response.status_code == 404, response.text


# Every integer a query string brings: offsets, limits and the compare route's ids.
QUERY_ROUTES = [
    "/competitions?offset={n}",
    "/competitions?limit={n}",
    "/competitions/churn/submissions?offset={n}",
    "/competitions/churn/submissions?limit={n}",
    "/competitions/churn/leaderboard?offset={n}",
    "/competitions/churn/leaderboard?limit={n}",
    "/competitions/churn/leaderboard?board=private&offset={n}",
    "/competitions/churn/compare?a={n}&b=1",
    "/competitions/churn/compare?a=1&b={n}",
    "/competitions/churn/invitations?offset={n}",
]


def test_every_integer_query_parameter_is_bounded(client):
    checked = 0
    for path, operations in client.app.openapi()["paths"].items():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                schema = parameter["schema"]
                if parameter["in"] == "query" and schema.get("type") == "integer":
                    assert schema.get("maximum", 2**63) <= 2**31 - 1, (path, parameter["name"])
                    assert "minimum" in schema, (path, parameter["name"])
                    checked += 1
    assert checked >= 8


@pytest.mark.parametrize("route", QUERY_ROUTES)
def test_out_of_range_query_integers_are_422_and_never_500(client, host, alice, route):
    ready_competition(client, host.headers)
    assert client.post(f"{API}/competitions/churn/join", headers=alice.headers).status_code == 201
    for caller in (host, alice):
        for bad in ("99999999999999999999", str(2**63), str(2**31), "-1"):
            response = client.get(API + route.format(n=bad), headers=caller.headers)
            assert response.status_code == 422, (caller.name, bad, response.text)
            assert response.json()["code"], response.text


def test_the_largest_offset_is_an_empty_page(client, host):
    ready_competition(client, host.headers)
    for route in (
        "/competitions?offset={n}",
        "/competitions/churn/leaderboard?offset={n}",
        "/competitions/churn/submissions?offset={n}",
    ):
        response = client.get(API + route.format(n=2**31 - 1), headers=host.headers)
        assert response.status_code == 200, (route, response.text)


def test_a_settings_count_past_the_columns_range_is_422(client, host):
    ready_competition(client, host.headers)
    for value in (2**31, 2**63, 10**20):
        response = client.patch(
            f"{API}/competitions/churn",
            json={"total_submission_limit": value},
            headers=host.headers,
        )
        assert response.status_code == 422, (value, response.text)
