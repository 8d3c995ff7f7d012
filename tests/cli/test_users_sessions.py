"""`podium users sessions NAME [--end]` lists a user's signed-in browsers (never their secrets)
and ends them; `podium users password` and `podium users revoke NAME` end them as well."""

from collections.abc import Iterator

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from app.auth.service import start_web_session, user_for_token, user_named
from app.config import get_settings
from app.db import make_engine, make_session_factory
from app.models import WebSession

SECRET_KEY = "cli-sessions-secret"


@pytest.fixture
def cli(tmp_path, monkeypatch) -> Iterator[tuple[CliRunner, str]]:  # type: ignore[no-untyped-def]
    from tests.databases import migrated

    url = f"sqlite:///{tmp_path}/users.db"
    migrated(url)  # the users commands open an existing database, never make one
    monkeypatch.setenv("PODIUM_DATABASE_URL", url)
    monkeypatch.setenv("PODIUM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PODIUM_SECRET_KEY", SECRET_KEY)
    get_settings.cache_clear()
    try:
        yield CliRunner(), url
    finally:
        get_settings.cache_clear()


def _run(runner: CliRunner, *args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
    from app.cli import app

    return runner.invoke(app, list(args), input=stdin)


def _open(url: str, name: str, *, token: str | None = None) -> str:
    """A browser session of ``name``, signed in with ``token`` or (None) the password."""
    engine = make_engine(url)
    with make_session_factory(engine)() as session:
        user = user_named(session, name)
        token_row = None
        if token is not None:
            user_for_token(session, token=token, secret_key=SECRET_KEY)
            token_row = user.tokens[0]
        secret = start_web_session(session, user=user, secret_key=SECRET_KEY, token=token_row)
        session.commit()
    engine.dispose()
    return secret


def _sessions(url: str, name: str) -> int:
    engine = make_engine(url)
    with make_session_factory(engine)() as session:
        user = user_named(session, name)
        count = session.scalar(
            select(func.count(WebSession.id)).where(WebSession.user_id == user.id)
        )
    engine.dispose()
    return int(count or 0)


def _create(runner: CliRunner, name: str) -> str:
    result = _run(runner, "users", "create", name, "--password", stdin="a long passphrase\n")
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]  # the token; stderr names the database


def test_sessions_lists_how_each_browser_signed_in_and_never_the_secret(cli):
    runner, url = cli
    token = _create(runner, "ada")
    _create(runner, "bob")
    secrets = [_open(url, "ada"), _open(url, "ada", token=token), _open(url, "bob")]
    listing = _run(runner, "users", "sessions", "ada")
    assert listing.exit_code == 0, listing.output
    lines = listing.stdout.splitlines()  # stderr names the database
    assert lines[0].split() == ["ID", "OPENED", "HOW", "LAST", "SEEN"]
    rows = lines[1:]
    assert len(rows) == 2
    assert "password" in rows[0] and f"token {token[:10]}" in rows[1]
    assert not any(secret in listing.output for secret in secrets)
    assert token not in listing.output


def test_sessions_end_ends_every_session_of_that_user_only(cli):
    runner, url = cli
    token = _create(runner, "ada")
    _create(runner, "bob")
    _open(url, "ada")
    _open(url, "ada", token=token)
    _open(url, "bob")
    ended = _run(runner, "users", "sessions", "ada", "--end")
    assert ended.exit_code == 0, ended.output
    assert "ended 2 session(s) of 'ada'" in ended.output
    assert _sessions(url, "ada") == 0 and _sessions(url, "bob") == 1
    assert "ID" in _run(runner, "users", "sessions", "ada").output  # the header, no rows


def test_a_password_change_ends_the_users_sessions(cli):
    runner, url = cli
    token = _create(runner, "ada")
    _open(url, "ada")
    _open(url, "ada", token=token)
    changed = _run(runner, "users", "password", "ada", stdin="another passphrase\n")
    assert changed.exit_code == 0, changed.output
    assert _sessions(url, "ada") == 0


def test_revoking_the_user_ends_every_session_and_one_token_only_its_own(cli):
    runner, url = cli
    token = _create(runner, "ada")
    _open(url, "ada")
    _open(url, "ada", token=token)
    token_id = "1"
    one = _run(runner, "users", "revoke", "ada", "--token-id", token_id)
    assert one.exit_code == 0, one.output
    assert _sessions(url, "ada") == 1  # the password session stays
    everything = _run(runner, "users", "revoke", "ada")
    assert everything.exit_code == 0, everything.output
    assert _sessions(url, "ada") == 0


def test_sessions_of_an_unknown_user_is_one_error_line(cli):
    runner, _url = cli
    result = _run(runner, "users", "sessions", "nobody")
    assert result.exit_code == 2 and "no user named 'nobody'" in result.output
