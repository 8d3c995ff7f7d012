"""Winners' checks for prediction competitions (issue 43): a team attaches the code behind a
submission, private to it and the hosts, its SHA-256 in the record."""

import hashlib

from app.main import create_app
from tests.asgi_client import TestClient
from tests.helpers import API, PERFECT, ready_competition, submit

CODE = b"import sklearn\nprint('the model behind submission 1')\n"


def _attach(client, headers, submission_id, content=CODE):  # type: ignore[no-untyped-def]
    return client.put(
        f"{API}/competitions/churn/submissions/{submission_id}/code",
        files={"file": ("train.py", content, "text/x-python")},
        headers=headers,
    )


def test_the_team_attaches_its_code_and_the_record_holds_its_hash(client, host, alice, bob):
    ready_competition(client, host.headers)
    sub = submit(client, alice.headers, PERFECT).json()["id"]
    attached = _attach(client, alice.headers, sub)
    assert attached.status_code == 201, attached.text
    digest = hashlib.sha256(CODE).hexdigest()
    assert attached.json()["sha256"] == digest
    receipt = attached.json()["receipt"]
    assert receipt["kind"] == "code_attached"
    assert receipt["body"]["sha256"] == digest and receipt["body"]["submission"] == sub
    lines = client.get(f"{API}/competitions/churn/ledger").text.splitlines()
    assert '"kind":"code_attached"' in lines[-1]
    url = f"{API}/competitions/churn/submissions/{sub}/code"
    for who in (host, alice):
        got = client.get(url, headers=who.headers)
        assert got.status_code == 200 and got.content == CODE
    # Private: another participant, and nobody without a token.
    assert client.get(url, headers=bob.headers).status_code == 404
    assert client.get(url).status_code == 401


def test_only_the_team_attaches(client, host, alice, bob):
    ready_competition(client, host.headers)
    sub = submit(client, alice.headers, PERFECT).json()["id"]
    assert _attach(client, bob.headers, sub).status_code == 404
    assert _attach(client, host.headers, sub).status_code == 404
    assert _attach(client, {}, sub).status_code == 401
    assert _attach(client, alice.headers, 999_999).status_code == 404
    assert (
        client.get(
            f"{API}/competitions/churn/submissions/{sub}/code", headers=alice.headers
        ).json()["detail"]
        == f"submission {sub} has no code attached"
    )


def test_an_attachment_is_bounded(settings, session_factory, host, alice):
    small = settings.model_copy(update={"code_max_bytes": 1024})
    with TestClient(create_app(small, session_factory=session_factory)) as client:
        ready_competition(client, host.headers)
        sub = submit(client, alice.headers, PERFECT).json()["id"]
        response = _attach(client, alice.headers, sub, b"#" * 2048)
        assert response.status_code == 413, response.text
