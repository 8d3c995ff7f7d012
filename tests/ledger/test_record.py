"""The record (issue 43): every ranked fact in the competition's hash chain, in the transaction
of the fact; signed receipts; sealed values opened at the reveal and not before; and
``podium verify`` finding each kind of tampering."""

import json
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from sqlalchemy import text

from app.jobs.sweep import sweep
from app.ledger.chain import GENESIS, canonical, link, opens, sha256_hex
from app.ledger.signing import verifies
from app.ledger.verify import Material, check, from_url
from tests.helpers import (
    API,
    PERFECT,
    PRIVATE_WRONG,
    PUBLIC_HALF,
    close_now,
    ready_competition,
    submit,
)


def _material(client, slug: str = "churn") -> Material:  # type: ignore[no-untyped-def]
    def get(url: str) -> tuple[int, str]:
        parts = urlsplit(url)
        response = client.get(parts.path + (f"?{parts.query}" if parts.query else ""))
        return response.status_code, response.text

    return from_url(f"http://testserver/competitions/{slug}", get=get)


def _entries(client, headers=None) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    response = client.get(f"{API}/competitions/churn/ledger", headers=headers or {})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines()[1:]]


def _unsigned(signed: dict) -> dict:  # type: ignore[type-arg]
    return {k: v for k, v in signed.items() if k != "signature"}


def test_an_upload_answers_with_a_receipt_signed_by_the_published_key(client, host, alice):
    ready_competition(client, host.headers)
    response = submit(client, alice.headers, PERFECT)
    assert response.status_code == 202
    receipt = response.json()["receipt"]
    key = client.get(f"{API}/ledger/key").json()
    assert key["algorithm"] == "Ed25519"
    assert verifies(key["public_key"], _unsigned(receipt), receipt["signature"])
    assert receipt["kind"] == "received"
    assert receipt["body"]["submission"] == response.json()["id"]
    assert receipt["body"]["sha256"] == sha256_hex(PERFECT)
    # The entry, its position and the head then: the chain's first entry here (after the key).
    digest = sha256_hex(canonical(receipt["body"]))
    assert (
        receipt["head"]
        == receipt["entry_hash"]
        == link(receipt["prev_hash"], receipt["seq"], digest)
    )
    # Another key does not verify it.
    other = client.get(f"{API}/ledger/key").json()["public_key"]
    assert other == key["public_key"]
    assert not verifies(key["public_key"], {**_unsigned(receipt), "seq": 99}, receipt["signature"])


def test_every_fact_is_chained_in_order(client, host, alice, bob):
    ready_competition(client, host.headers)
    first = submit(client, alice.headers, PERFECT).json()
    refused = submit(client, bob.headers, b"not,a\ncsv,file,at all\n")
    assert refused.status_code == 422
    # A refused upload answers with its receipt too.
    assert refused.json()["receipt"]["kind"] == "refused"
    selected = client.post(f"{API}/submissions/{first['id']}/select", headers=alice.headers)
    assert selected.status_code == 200, selected.text
    entries = _entries(client)
    kinds = [e["kind"] for e in entries]
    assert kinds == ["key_published", "received", "scored", "refused", "selected"]
    prev = GENESIS
    for seq, entry in enumerate(entries, 1):
        assert entry["seq"] == seq
        assert entry["prev_hash"] == prev
        assert entry["entry_hash"] == link(prev, seq, sha256_hex(canonical(entry["body"])))
        prev = entry["entry_hash"]
    assert check(_material(client)).ok


def test_private_values_are_sealed_until_the_phase_ends_then_opened(
    client, host, alice, session_factory, settings
):
    ready_competition(client, host.headers)
    # Public AUC 0.5, private AUC 1.0.
    assert submit(client, alice.headers, PUBLIC_HALF).status_code == 202
    scored = next(e for e in _entries(client, alice.headers) if e["kind"] == "scored")
    (column,) = scored["body"]["columns"].values()
    assert column == {"public": 0.5}  # the public value only, in clear
    assert "opening" not in scored
    assert len(scored["body"]["sealed"]) == 64
    # Not to the team itself, nor anyone else, nor in a page of the record read by a stranger.
    for headers in ({}, alice.headers):
        text_seen = client.get(f"{API}/competitions/churn/ledger", headers=headers).text
        assert '"opening"' not in text_seen and '"private"' not in text_seen
    # The hosts read them opened (they see private scores already).
    hosts_view = next(e for e in _entries(client, host.headers) if e["kind"] == "scored")
    assert opens(scored["body"]["sealed"], hosts_view["opening"])
    close_now(session_factory)
    # The sweep says so in the record, once, with the head as the phase ended.
    for _ in range(2):
        sweep(session_factory, lambda _id: None, settings=settings)
    revealed = [e for e in _entries(client) if e["kind"] == "revealed"]
    assert [e["body"]["phase"] for e in revealed] == ["main"]
    assert revealed[0]["body"]["head_at_end"]["seq"] == revealed[0]["seq"] - 1
    opened = next(e for e in _entries(client) if e["kind"] == "scored")
    assert opens(opened["body"]["sealed"], opened["opening"])
    (values,) = opened["opening"]["values"].values()
    assert values["private"] == 1.0
    report = check(_material(client))
    assert report.ok, report.problems
    assert report.opened == 1


def test_a_blind_phase_seals_its_public_values_too(client, host, alice, session_factory):
    ready_competition(client, host.headers)
    phase = client.patch(
        f"{API}/competitions/churn/phases/main", json={"board": "blind"}, headers=host.headers
    )
    assert phase.status_code == 200, phase.text
    assert submit(client, alice.headers, PUBLIC_HALF).status_code == 202
    scored = next(e for e in _entries(client) if e["kind"] == "scored")
    assert scored["body"]["columns"] == {}
    assert "opening" not in scored


def test_blind_values_open_at_the_reveal_and_not_before(
    client, host, alice, bob, session_factory, settings
):
    """Nothing of a blind phase's values through any route a participant or a stranger can
    call before the phase ends; at the reveal the record opens them, and they are the ones
    sealed at the upload."""
    ready_competition(client, host.headers)
    blind = client.patch(
        f"{API}/competitions/churn/phases/main", json={"board": "blind"}, headers=host.headers
    )
    assert blind.status_code == 200, blind.text
    made = submit(client, alice.headers, PUBLIC_HALF).json()["id"]  # public 0.5, private 1.0
    sealed = next(e for e in _entries(client) if e["kind"] == "scored")["body"]["sealed"]
    for headers in ({}, alice.headers, bob.headers):
        ledger = client.get(f"{API}/competitions/churn/ledger", headers=headers).text
        assert '"opening"' not in ledger and '"public":0.5' not in ledger
        for board in ("public", "private"):
            for path in ("leaderboard", "leaderboard.csv"):
                seen = client.get(f"{API}/competitions/churn/{path}?board={board}", headers=headers)
                assert seen.status_code != 200 or "0.5" not in seen.text, (path, board, seen.text)
    own = client.get(f"{API}/submissions/{made}", headers=alice.headers).json()
    assert own.get("public_score") is None and own.get("private_score") is None
    assert "0.5" not in json.dumps(own)
    # The reveal: the phase ends, the sweep chains it, the record opens the values.
    close_now(session_factory)
    sweep(session_factory, lambda _id: None, settings=settings)
    opened = next(e for e in _entries(client, bob.headers) if e["kind"] == "scored")
    assert opened["body"]["sealed"] == sealed and opens(sealed, opened["opening"])
    (values,) = opened["opening"]["values"].values()
    assert (values["public"], values["private"]) == (0.5, 1.0)
    report = check(_material(client))
    assert report.ok, report.problems


def test_verify_finds_a_score_changed_in_the_database(client, host, alice, bob, session_factory):
    ready_competition(client, host.headers)
    submit(client, alice.headers, PERFECT)
    submit(client, bob.headers, PUBLIC_HALF)
    assert check(_material(client)).ok
    with session_factory() as session:
        # Bob's 0.5 made 0.99, in the score and in the standings the board reads.
        session.execute(text("UPDATE scores SET public_score = 0.99 WHERE public_score = 0.5"))
        session.execute(text("UPDATE standings SET score = 0.99 WHERE score = 0.5"))
        session.execute(text("UPDATE board_revisions SET revision = revision + 1"))
        session.commit()
    report = check(_material(client))
    assert not report.ok
    assert (
        "board main/public: team bob's score 0.99 is not the 0.5 the chain's scores give it by "
        "the phase's rules" in report.problems
    )


def test_verify_finds_an_entry_deleted_or_reordered(client, host, alice, bob, session_factory):
    ready_competition(client, host.headers)
    submit(client, alice.headers, PERFECT)
    submit(client, bob.headers, PUBLIC_HALF)
    with session_factory() as session:
        session.execute(text("DELETE FROM ledger_entries WHERE seq = 3"))
        session.commit()
    problems = check(_material(client)).problems
    assert any("expected position 3" in p for p in problems)
    with session_factory() as session:
        # Positions 4 and 5 swapped (the rows' content moved, the unique position kept).
        session.execute(text("UPDATE ledger_entries SET seq = -4 WHERE seq = 4"))
        session.execute(text("UPDATE ledger_entries SET seq = 4 WHERE seq = 5"))
        session.execute(text("UPDATE ledger_entries SET seq = 5 WHERE seq = -4"))
        session.commit()
    problems = check(_material(client)).problems
    assert any("does not follow the entry before it" in p for p in problems)


def test_a_receipt_from_before_proves_a_rewritten_chain(client, host, alice, session_factory):
    """The server rewrites an entry and every hash after it, consistently: the chain holds
    together again, but the receipt the participant kept says otherwise."""
    ready_competition(client, host.headers)
    receipt = submit(client, alice.headers, PERFECT).json()["receipt"]
    submit(client, alice.headers, PUBLIC_HALF)
    with session_factory() as session:
        rows = session.execute(text("SELECT id, seq, body FROM ledger_entries ORDER BY seq")).all()
        prev = GENESIS
        for row_id, seq, body in rows:
            if seq == receipt["seq"]:
                changed = json.loads(body)
                changed["sha256"] = "0" * 64  # another file, as if it had been uploaded
                body = canonical(changed)
            new = link(prev, seq, sha256_hex(body))
            session.execute(
                text(
                    "UPDATE ledger_entries SET body = :b, prev_hash = :p, entry_hash = :h "
                    "WHERE id = :i"
                ),
                {"b": body, "p": prev, "h": new, "i": row_id},
            )
            prev = new
        session.execute(text("UPDATE ledger_heads SET head = :h"), {"h": prev})
        session.commit()
    material = _material(client)
    assert check(material).ok  # the rewrite is consistent
    material.receipts = [("mine.json", receipt)]
    problems = check(material).problems
    assert problems == [
        f"receipt mine.json: the chain's entry {receipt['seq']} is not the one the server "
        "signed then (the record was changed after it)"
    ]


def test_verify_refuses_a_record_signed_with_another_key(client, host, alice):
    ready_competition(client, host.headers)
    receipt = submit(client, alice.headers, PERFECT).json()["receipt"]
    material = _material(client)
    real = material.header["public_key"]
    # A pinned key that is not the server's.
    problems = check(material, pinned_key="A" * 43 + "=").problems
    assert any("not the expected" in p for p in problems)
    # Re-signed with another key: the head's and the receipt's signatures fail under the real one.
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from app.ledger.signing import Signer

    forger = Signer(Ed25519PrivateKey.generate())
    material.header["head"] = forger.signed(_unsigned(material.header["head"]))
    material.receipts = [("r.json", forger.signed(_unsigned(receipt)))]
    problems = check(material, pinned_key=real).problems
    assert "the chain's head is not signed by the server's key" in problems
    assert "receipt r.json: not signed by the server's key" in problems


def test_hidden_banned_and_merged_facts_are_chained(client, host, alice, bob):
    ready_competition(client, host.headers)
    sub = submit(client, alice.headers, PERFECT).json()
    hidden = client.post(
        f"{API}/submissions/{sub['id']}/hide", json={"reason": "leak"}, headers=host.headers
    )
    assert hidden.status_code == 200, hidden.text
    assert (
        client.post(
            f"{API}/competitions/churn/bans",
            json={"team": "alice", "reason": "x"},
            headers=host.headers,
        ).status_code
        == 201
    )
    kinds = [e["kind"] for e in _entries(client)]
    assert kinds[-2:] == ["hidden", "team_banned"]


def test_phase_dates_changed_are_chained(client, host):
    ready_competition(client, host.headers)
    end = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0)
    response = client.patch(
        f"{API}/competitions/churn/phases/main", json={"end": end.isoformat()}, headers=host.headers
    )
    assert response.status_code == 200, response.text
    last = _entries(client)[-1]
    assert last["kind"] == "phase_changed"
    assert datetime.fromisoformat(last["body"]["end"]) == end


def test_the_record_of_a_draft_is_not_shown_to_others(client, host, alice):
    ready_competition(client, host.headers, "hidden-one", status="draft")
    assert client.get(f"{API}/competitions/hidden-one/ledger").status_code == 404
    assert (
        client.get(f"{API}/competitions/hidden-one/ledger", headers=alice.headers).status_code
        == 404
    )
    assert (
        client.get(f"{API}/competitions/hidden-one/ledger", headers=host.headers).status_code == 200
    )


def test_bad_paging_is_refused(client, host):
    ready_competition(client, host.headers)
    for query in ("after=-1", "limit=0", "limit=100001", "after=x", f"after={2**40}"):
        response = client.get(f"{API}/competitions/churn/ledger?{query}")
        assert response.status_code == 422, query


def test_a_scoring_batch_chains_its_entries_in_one_insert(
    settings, session_factory, host, alice, bob
):
    from app.jobs.score import score_submissions
    from app.main import create_app
    from tests.asgi_client import TestClient
    from tests.helpers import ParkedQueue

    queue = ParkedQueue()
    with TestClient(
        create_app(settings, session_factory=session_factory, scoring_queue=queue)
    ) as client:
        ready_competition(client, host.headers)
        for who in (alice, bob, alice):
            assert submit(client, who.headers, PERFECT).status_code == 202
        score_submissions(session_factory, queue.ids, settings)
        assert submit(client, bob.headers, PUBLIC_HALF).status_code == 202  # after the batch
        kinds = [e["kind"] for e in _entries(client)]
        assert kinds == ["key_published"] + ["received"] * 3 + ["scored"] * 3 + ["received"]
        report = check(_material(client))
        assert report.ok, report.problems


def test_the_signing_key_is_made_once_when_many_threads_ask_at_once(tmp_path):
    """The first uploads of a new server arrive together: one key, kept, for all of them."""
    from concurrent.futures import ThreadPoolExecutor

    from app.ledger.signing import signer_for

    with ThreadPoolExecutor(max_workers=16) as pool:
        keys = set(pool.map(lambda _: signer_for(tmp_path, None).public_key, range(64)))
    assert len(keys) == 1
    assert [p.name for p in (tmp_path / "ledger").iterdir()] == ["ed25519.key"]


def test_verify_finds_a_board_reordered_by_hand(client, host, alice, bob, session_factory):
    ready_competition(client, host.headers)
    submit(client, alice.headers, PERFECT)  # 1.0
    submit(client, bob.headers, PUBLIC_HALF)  # 0.5
    material = _material(client)
    assert check(material).ok
    rows = material.boards[("main", "public")]
    assert [r["team"] for r in rows] == ["alice", "bob"]
    rows[0]["rank"], rows[1]["rank"] = "2", "1"
    rows.reverse()  # bob's 0.5 above alice's 1.0
    rows.append(dict(rows[0], rank="3"))
    problems = check(material).problems
    assert "board main/public: its scores are not in rank order" in problems
    assert "board main/public: teams listed twice: bob" in problems


def _tamper(session_factory, sql: str) -> None:  # type: ignore[no-untyped-def]
    with session_factory() as session:
        session.execute(text(sql))
        session.execute(text("UPDATE board_revisions SET revision = revision + 1"))
        session.commit()


def test_verify_replays_the_chosen_rule_and_finds_a_board_row_it_does_not_give(
    client, host, alice, session_factory
):
    """The private board shows another of the team's scores than the one it chose: a score
    the chain holds for the team, but not the one the phase's rule counts."""
    ready_competition(client, host.headers)
    chosen = submit(client, alice.headers, PRIVATE_WRONG).json()["id"]  # public 1.0, private 0.0
    submit(client, alice.headers, PUBLIC_HALF)  # public 0.5, private 1.0
    assert (
        client.post(f"{API}/submissions/{chosen}/select", headers=alice.headers).status_code == 200
    )
    close_now(session_factory)
    material = _material(client)
    assert material.boards[("main", "private")][0]["score"] == "0.0"
    report = check(material)
    assert report.ok, report.problems
    _tamper(
        session_factory,
        "UPDATE standings SET score = 1.0, order_key = -1.0 WHERE board = 'private'",
    )
    problems = check(_material(client)).problems
    assert problems == [
        "board main/private: team alice's score 1.0 is not the 0.0 the chain's scores give it "
        "by the phase's rules"
    ]


def test_verify_replays_the_last_rule_and_finds_a_team_left_out(
    client, host, alice, bob, session_factory
):
    ready_competition(client, host.headers)
    changed = client.patch(
        f"{API}/competitions/churn/phases/main", json={"counts": "last"}, headers=host.headers
    )
    assert changed.status_code == 200, changed.text
    submit(client, alice.headers, PERFECT)  # 1.0
    submit(client, alice.headers, PUBLIC_HALF)  # 0.5, her latest: it counts
    submit(client, bob.headers, PERFECT)
    rows = _material(client).boards[("main", "public")]
    assert [(r["team"], r["score"]) for r in rows] == [("bob", "1.0"), ("alice", "0.5")]
    assert check(_material(client)).ok
    _tamper(
        session_factory,
        "UPDATE standings SET score = 1.0, order_key = -1.0 WHERE board = 'public'",
    )
    assert check(_material(client)).problems == [
        "board main/public: team alice's score 1.0 is not the 0.5 the chain's scores give it "
        "by the phase's rules"
    ]
    _tamper(session_factory, "DELETE FROM standings WHERE board = 'public' AND score = 1.0")
    problems = check(_material(client)).problems
    assert "board main/public: team bob is missing (by the chain it scores 1.0)" in problems


def test_a_deadline_moved_earlier_makes_later_uploads_late_in_the_replay_too(
    client, host, alice, bob
):
    """The server relabels what a moved deadline makes late (out of the boards); the replay
    does the same from the chained phase change, so the board still verifies."""
    ready_competition(client, host.headers)
    submit(client, alice.headers, PERFECT)
    cut = datetime.now(UTC)
    submit(client, bob.headers, PERFECT)  # after the new deadline: late, off the board
    moved = client.patch(
        f"{API}/competitions/churn", json={"deadline": cut.isoformat()}, headers=host.headers
    )
    assert moved.status_code == 200, moved.text
    material = _material(client)
    assert [r["team"] for r in material.boards[("main", "public")]] == ["alice"]
    report = check(material)
    assert report.ok, report.problems
