"""GET /api/v1/runtime: the Python and packages participants' code runs with."""

import importlib.metadata

from app.coderun.runtime import runtime_fingerprint
from tests.helpers import API


def test_the_runtime_lists_python_and_each_package(client, alice):
    response = client.get(f"{API}/runtime", headers=alice.headers)
    assert response.status_code == 200, response.text
    runtime = response.json()
    assert runtime["python"].count(".") == 2
    for name in ("numpy", "pandas", "scikit-learn", "scipy", "pyarrow", "nbclient", "ipykernel"):
        assert runtime["packages"][name] == importlib.metadata.version(name)
    assert runtime["fingerprint"] == runtime_fingerprint() and len(runtime["fingerprint"]) == 64


def test_the_runtime_is_for_signed_in_users(client):
    assert client.get(f"{API}/runtime").status_code == 401
