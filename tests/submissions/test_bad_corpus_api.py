"""The malformed corpus (tests/data/bad/) uploaded through the HTTP API, file after file.

Each file must be refused for its own reason: a 422 at upload when the cheap checks can tell
(format, encoding, header), otherwise a ``failed`` submission whose participant-visible error
names the problem. After the whole corpus the server must still be healthy and still score a
good file.
"""

import json
from pathlib import Path

from tests.helpers import API

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
MANIFEST = json.loads((BAD / "manifest.json").read_text())
GOOD = {
    "binary": b"id,target\nr01,0.1\nr02,0.9\nr03,0.2\nr04,0.8\nr05,0.7\nr06,0.3\nr07,0.6\nr08,0.4\n",
}


def _competition(client, host, name: str, spec: dict) -> str:  # type: ignore[no-untyped-def]
    slug = name.replace("_", "-")
    body = {
        "slug": slug,
        "title": name,
        "metric": {"name": spec["metric"], "params": spec["params"]},
        "daily_submission_limit": 10_000,
    }
    response = client.post(f"{API}/competitions", json=body, headers=host.headers)
    assert response.status_code == 201, response.text
    key = (BAD / spec["file"]).read_bytes()
    response = client.put(
        f"{API}/competitions/{slug}/answer-key",
        files={"file": ("key.csv", key, "text/csv")},
        headers=host.headers,
    )
    assert response.status_code == 201, response.text
    return slug


def _submit(client, caller, slug: str, name: str, content: bytes):  # type: ignore[no-untyped-def]
    return client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": (name, content, "application/octet-stream")},
        headers=caller.headers,
    )


def _refusal(client, caller, slug: str, name: str) -> tuple[str, str | None]:  # type: ignore[no-untyped-def]
    """(how it was refused, the message) for one corpus file."""
    response = _submit(client, caller, slug, name, (BAD / name).read_bytes())
    if response.status_code == 422:
        body = response.json()
        return f"422:{body.get('kind')}", body["detail"]
    assert response.status_code == 202, (name, response.status_code, response.text)
    view = client.get(f"{API}/submissions/{response.json()['id']}", headers=caller.headers)
    assert view.status_code == 200, view.text
    return view.json()["status"], view.json()["error"]


def test_every_malformed_file_is_refused_for_its_reason_and_the_server_stays_healthy(
    client, host, alice
):
    slugs = {
        name: _competition(client, host, name, spec) for name, spec in MANIFEST["keys"].items()
    }
    wrong = []
    for name, case in sorted(MANIFEST["files"].items()):
        how, message = _refusal(client, alice, slugs[case["key"]], name)
        # A 422 from intake carries its kind; the upload layer's own refusals (an empty body)
        # carry none but must still say why.
        refused = how in ("failed", f"422:{case['kind']}", "422:None")
        if not refused or message is None or case["message"] not in message:
            wrong.append(
                f"{name}: expected {case['kind']} with {case['message']!r}, got {how}: {message!r}"
            )
    assert not wrong, "\n".join(wrong)

    assert client.get("/healthz").json() == {"status": "ok"}
    response = _submit(client, alice, slugs["binary"], "good.csv", GOOD["binary"])
    assert response.status_code == 202, response.text
    view = client.get(f"{API}/submissions/{response.json()['id']}", headers=alice.headers).json()
    assert view["status"] == "scored" and view["error"] is None


def test_upload_time_refusals_keep_no_file_but_show_in_the_history(client, host, alice, settings):
    slug = _competition(client, host, "binary", MANIFEST["keys"]["binary"])
    for name in (
        "utf16.csv",
        "png_named_csv.csv",
        "header_case.csv",
        "zip_bomb.zip",
        "no_header.csv",
    ):
        response = _submit(client, alice, slug, name, (BAD / name).read_bytes())
        assert response.status_code == 422, (name, response.text)
        assert response.json()["kind"] == MANIFEST["files"][name]["kind"]
        assert MANIFEST["files"][name]["message"] in response.json()["detail"]
    # Issue 9: each refusal is a failed submission in the team's history, with its reason and
    # free of quota; the refused file itself is not kept.
    listed = client.get(f"{API}/competitions/{slug}/submissions", headers=alice.headers).json()
    assert len(listed) == 5 and all(s["status"] == "failed" and s["error"] for s in listed)
    stored = settings.data_dir / "submissions"
    assert not stored.exists() or not [p for p in stored.rglob("*") if p.is_file()]
    quota = client.get(f"{API}/competitions/{slug}/quota", headers=alice.headers).json()
    assert quota["used_today"] == 0
