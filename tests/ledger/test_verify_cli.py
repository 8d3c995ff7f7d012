"""``podium verify ARCHIVE --receipts DIR`` on a host's export: the whole chain in
``ledger.jsonl`` beside the boards, checked offline; any break exits 1."""

import io
import json
import zipfile
from dataclasses import replace
from pathlib import Path

from tests.cli.inprocess import run_main
from tests.helpers import API, PERFECT, PUBLIC_HALF, close_now, ready_competition, submit


def _export(
    client, host, alice, bob, session_factory, tmp_path: Path, query: str = ""
) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    ready_competition(client, host.headers)
    receipts = tmp_path / "receipts"
    receipts.mkdir()
    for who, body in ((alice, PERFECT), (bob, PUBLIC_HALF)):
        receipt = submit(client, who.headers, body).json()["receipt"]
        (receipts / f"{who.name}.json").write_text(json.dumps(receipt))
    close_now(session_factory)
    response = client.get(f"{API}/competitions/churn/export{query}", headers=host.headers)
    assert response.status_code == 200, response.text
    archive = tmp_path / "churn.zip"
    archive.write_bytes(response.content)
    return archive, receipts


def test_an_export_verifies_offline_with_its_receipts(
    client, host, alice, bob, session_factory, tmp_path
):
    archive, receipts = _export(client, host, alice, bob, session_factory, tmp_path)
    with zipfile.ZipFile(archive) as z:
        names = set(z.namelist())
        assert {"ledger.jsonl", "boards/main-public.csv", "boards/main-private.csv"} <= names
        assert "competition.yaml" in names  # still the bundle it was
    result = run_main("verify", str(archive), "--receipts", str(receipts))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "receipts checked: 2" in result.stdout
    assert "boards checked: 2" in result.stdout
    assert "sealed values opened and checked: 2" in result.stdout
    assert result.stdout.rstrip().endswith("verdict: OK")


def test_an_export_with_its_submissions_has_every_score_recomputed(
    client, host, alice, bob, session_factory, tmp_path
):
    archive, _receipts = _export(
        client, host, alice, bob, session_factory, tmp_path, "?with_submissions=true"
    )
    result = run_main("verify", str(archive))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "scores recomputed from the files: 2" in result.stdout
    # Without the submissions, nothing to recompute from, and said so.
    plain = tmp_path / "plain.zip"
    plain.write_bytes(client.get(f"{API}/competitions/churn/export", headers=host.headers).content)
    said = run_main("verify", str(plain))
    assert said.returncode == 0 and "scores recomputed from the files: 0" in said.stdout
    assert "exported without --with-submissions" in said.stdout


def test_recomputing_finds_a_score_the_server_got_wrong(
    client, host, alice, bob, session_factory, tmp_path, monkeypatch
):
    """The server scored bob's file 0.75 where its file gives 0.5, and chained, signed and
    ranked that consistently: only recomputing the score from the file finds it."""
    from app.jobs import score as jobs

    honest = jobs.score_columns_file

    def skewed(path, **kwargs):  # type: ignore[no-untyped-def]
        result = honest(path, **kwargs)
        if result.public != 0.5:
            return result
        columns = {k: {**v, "public": 0.75} for k, v in (result.columns or {}).items()}
        return replace(result, public=0.75, columns=columns)

    ready_competition(client, host.headers)
    submit(client, alice.headers, PERFECT)
    monkeypatch.setattr(jobs, "score_columns_file", skewed)
    bob_id = submit(client, bob.headers, PUBLIC_HALF).json()["id"]
    monkeypatch.setattr(jobs, "score_columns_file", honest)
    close_now(session_factory)
    response = client.get(
        f"{API}/competitions/churn/export?with_submissions=true", headers=host.headers
    )
    archive = tmp_path / "churn.zip"
    archive.write_bytes(response.content)
    result = run_main("verify", str(archive))
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        f"BROKEN: submission {bob_id} (bob): its public roc_auc is 0.75 in the chain, 0.5 "
        "recomputed from its file"
    ) in result.stdout.splitlines()
    assert result.stdout.count("BROKEN") == 1, result.stdout


def test_a_changed_score_in_the_archive_breaks_the_verdict(
    client, host, alice, bob, session_factory, tmp_path
):
    archive, receipts = _export(client, host, alice, bob, session_factory, tmp_path)
    with zipfile.ZipFile(archive) as z:
        files = {name: z.read(name) for name in z.namelist()}
    lines = files["ledger.jsonl"].decode().splitlines()
    changed = []
    for line in lines:
        value = json.loads(line)
        if value.get("kind") == "scored" and value["body"]["columns"]:
            for cell in value["body"]["columns"].values():
                if cell["public"] == 0.5:
                    cell["public"] = 0.75
        changed.append(json.dumps(value))
    files["ledger.jsonl"] = ("\n".join(changed) + "\n").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    archive.write_bytes(out.getvalue())
    result = run_main("verify", str(archive), "--receipts", str(receipts))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "its hash does not cover its content (changed)" in result.stdout


def test_verify_says_what_it_cannot_read(tmp_path):
    missing = run_main("verify", str(tmp_path / "nope.zip"))
    assert missing.returncode == 2 and "no such archive" in missing.stderr
    (tmp_path / "empty.zip").write_bytes(_zip({"readme.txt": b"hi"}))
    empty = run_main("verify", str(tmp_path / "empty.zip"))
    assert empty.returncode == 2 and "holds no ledger.jsonl" in empty.stderr
    (tmp_path / "ledger.jsonl").write_text("not json\n")
    garbage = run_main("verify", str(tmp_path / "ledger.jsonl"))
    assert garbage.returncode == 2 and "line 1 of the record is not JSON" in garbage.stderr
    nowhere = run_main("verify", "https://example.invalid/about")
    assert nowhere.returncode == 2 and "names no competition" in nowhere.stderr


def test_only_the_hosts_export_the_record(client, host, alice):
    ready_competition(client, host.headers)
    assert client.get(f"{API}/competitions/churn/export", headers=alice.headers).status_code == 403
    assert client.get(f"{API}/competitions/churn/export").status_code == 401


def _zip(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return out.getvalue()
