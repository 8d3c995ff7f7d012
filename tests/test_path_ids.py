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
    ("DELETE", "/competitions/churn/team/invitations/{id}"),
    ("POST", "/invitations/{id}/accept"),
    ("POST", "/invitations/{id}/decline"),
    ("DELETE", "/auth/tokens/{id}"),
]


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
    assert checked == len(ID_ROUTES)


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
