"""The site admin's account commands on the server's machine: `podium users create --email`,
`disable`, `enable`, `role`, `invite`, and `podium mail outbox` / `send`."""

from collections.abc import Iterator

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from app.auth.service import user_for_token, user_named
from app.config import get_settings
from app.db import make_engine, make_session_factory, unit_of_work
from app.errors import Unauthorized
from app.mail.outbox import enqueue_mail
from app.models import LinkSecret

SECRET_KEY = "cli-accounts-secret"


@pytest.fixture
def cli(tmp_path, monkeypatch) -> Iterator[tuple[CliRunner, str]]:  # type: ignore[no-untyped-def]
    from tests.databases import migrated

    url = f"sqlite:///{tmp_path}/users.db"
    migrated(url)
    monkeypatch.setenv("PODIUM_DATABASE_URL", url)
    monkeypatch.setenv("PODIUM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PODIUM_SECRET_KEY", SECRET_KEY)
    monkeypatch.delenv("PODIUM_SMTP_URL", raising=False)
    get_settings.cache_clear()
    try:
        yield CliRunner(), url
    finally:
        get_settings.cache_clear()


def _run(runner: CliRunner, *args: str):  # type: ignore[no-untyped-def]
    from app.cli import app

    return runner.invoke(app, list(args))


def _factory(url: str):  # type: ignore[no-untyped-def]
    return make_session_factory(make_engine(url))


def test_create_with_an_email_takes_it_as_verified(cli):
    runner, url = cli
    made = _run(runner, "users", "create", "ada", "--email", "Ada@Example.org")
    assert made.exit_code == 0, made.output
    with _factory(url)() as session:
        ada = user_named(session, "ada")
        assert ada.email == "ada@example.org" and ada.email_verified_at is not None
        assert ada.may_take_part
    taken = _run(runner, "users", "create", "bea", "--email", "ada@example.org")
    assert taken.exit_code == 2 and "belongs to another user" in taken.output
    bad = _run(runner, "users", "create", "cy", "--email", "not an address")
    assert bad.exit_code == 2 and "email" in bad.output


def test_disable_stops_the_token_at_once_and_enable_brings_it_back(cli):
    runner, url = cli
    output = _run(runner, "users", "create", "ada").output
    (token,) = [line for line in output.splitlines() if line.startswith("pdm_")]
    with _factory(url)() as session:
        assert user_for_token(session, token=token, secret_key=SECRET_KEY).name == "ada"
    assert _run(runner, "users", "disable", "ada").exit_code == 0
    with _factory(url)() as session, pytest.raises(Unauthorized):
        user_for_token(session, token=token, secret_key=SECRET_KEY)
    assert _run(runner, "users", "enable", "ada").exit_code == 0
    with _factory(url)() as session:
        assert user_for_token(session, token=token, secret_key=SECRET_KEY).name == "ada"
    unknown = _run(runner, "users", "disable", "nobody")
    assert unknown.exit_code == 2 and "nobody" in unknown.output


def test_role_and_invite(cli):
    runner, url = cli
    _run(runner, "users", "create", "ada")
    assert _run(runner, "users", "role", "ada", "admin").exit_code == 0
    assert _run(runner, "users", "role", "ada", "king").exit_code == 2
    invited = _run(runner, "users", "invite", "--uses", "3", "--days", "2")
    assert invited.exit_code == 0 and "/signup?invitation=pdl_" in invited.output
    with _factory(url)() as session:
        assert user_named(session, "ada").is_admin
        (row,) = session.scalars(select(LinkSecret)).all()
        assert row.uses_left == 3 and row.purpose == "invite"


def test_mail_outbox_lists_what_the_sender_wrote(cli):
    runner, url = cli
    with unit_of_work(_factory(url)) as session:
        enqueue_mail(session, to="ada@example.org", subject="Verify your address", body="Link")
    listed = _run(runner, "mail", "outbox")
    assert "1 waiting" in listed.output
    sent = _run(runner, "mail", "send")
    assert sent.exit_code == 0 and "sent 1" in sent.output
    listed = _run(runner, "mail", "outbox", "--show")
    assert "0 waiting, 1 sent" in listed.output
    assert "ada@example.org  Verify your address" in listed.output and "Link" in listed.output
