"""User names are checked when a user is made: 1 to 64 characters, no control or invisible
formatting characters, no whitespace at either end. Names already in the database stay as
they are."""

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from app.auth.service import create_user, user_named
from app.config import get_settings
from app.errors import Unprocessable
from app.models import Role


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("", "at least 1 character"),
        ("x" * 65, "at most 64 characters"),
        (" ada", "start or end with whitespace"),
        ("ada\t", "start or end with whitespace"),
        ("a\x00da", "control character"),
        ("a\nda", "control character"),
        ("a\x1bda", "control character"),
        ("a\u202eda", "control character"),  # right-to-left override
        ("a\u200bda", "control character"),  # zero-width space
    ],
)
def test_a_bad_user_name_is_refused_naming_the_rule(session_factory, settings, name, rule):
    with session_factory() as session:
        with pytest.raises(Unprocessable) as refused:
            create_user(session, name=name, role=Role.participant, secret_key=settings.secret_key)
        assert rule in refused.value.detail
        assert refused.value.status_code == 422


@pytest.mark.parametrize("name", ["ada", "Ada Lovelace", "émile-zola_2", "x" * 64, "=SUM(1)"])
def test_ordinary_names_are_accepted(session_factory, settings, name):
    with session_factory() as session:
        user, _token = create_user(
            session, name=name, role=Role.participant, secret_key=settings.secret_key
        )
        assert user.name == name


def test_a_name_already_in_the_database_is_left_alone(session_factory):
    with session_factory() as session:
        session.execute(
            text(
                "INSERT INTO users (name, role, created_at)"
                " VALUES (' old\tname ', 'participant', '2026-01-01 00:00:00+00')"
            )
        )
        session.commit()
        assert user_named(session, " old\tname ").name == " old\tname "


def test_the_cli_refuses_a_bad_name_in_one_line(tmp_path, monkeypatch):
    from app.cli import app
    from tests.databases import migrated

    url = f"sqlite:///{tmp_path}/names.db"
    migrated(url)
    monkeypatch.setenv("PODIUM_DATABASE_URL", url)
    monkeypatch.setenv("PODIUM_DATA_DIR", str(tmp_path / "data"))
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(app, ["users", "create", "ada "])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 2
    # Beside the line naming the database the command opened, one error line.
    lines = [line for line in result.output.splitlines() if not line.startswith("database: ")]
    assert len(lines) == 1 and "whitespace" in lines[0], result.output
