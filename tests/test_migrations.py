"""The Alembic chain is the only way the schema is built: it must match the models exactly."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

import app.models  # noqa: F401
from app.db import Base, make_engine
from app.migrate import alembic_config
from tests.conftest import _throwaway_postgres


def test_migrations_match_the_models(engine):
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_upgrade_keeps_existing_rows_and_fills_new_columns(tmp_path):
    from alembic import command

    url = f"sqlite:///{tmp_path}/old.db"
    command.upgrade(alembic_config(url), "0001")
    eng = make_engine(url)
    with eng.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO users (id, name, role, created_at)"
                " VALUES (1, 'h', 'organiser', '2026-01-01 00:00:00')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO competitions (id, slug, title, description, metric_name,"
                " metric_params,"
                " daily_submission_limit, final_selection_limit, created_by_id, created_at)"
                " VALUES (1, 'old', 'Old', '', 'rmse', '{}', 5, 2, 1, '2026-01-01 00:00:00')"
            )
        )
    command.upgrade(alembic_config(url), "head")
    with eng.connect() as conn:
        row = conn.execute(
            text("SELECT max_team_size, score_decimals, start FROM competitions")
        ).one()
    assert row[0] == 5 and row[1] == 5 and row[2] is not None
    eng.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_database_url(request, tmp_path):  # type: ignore[no-untyped-def]
    """A database with no schema yet, on either dialect."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/old.db"
        return
    yield from _throwaway_postgres()


def test_upgrade_to_0004_makes_each_creator_the_owner(empty_database_url):
    from alembic import command

    url = empty_database_url
    command.upgrade(alembic_config(url), "0003")
    eng = make_engine(url)
    with eng.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO users (id, name, role, created_at) VALUES"
                " (1, 'ada', 'organiser', '2026-01-01 00:00:00+00'),"
                " (2, 'grace', 'organiser', '2026-01-01 00:00:00+00'),"
                " (3, 'alan', 'participant', '2026-01-01 00:00:00+00')"
            )
        )
        for competition_id, slug, creator in ((1, "one", 1), (2, "two", 2), (3, "three", 1)):
            conn.execute(
                text(
                    "INSERT INTO competitions (id, slug, title, description, metric_name,"
                    " metric_params, daily_submission_limit, final_selection_limit,"
                    " max_team_size, score_decimals, start, created_by_id, created_at)"
                    " VALUES (:id, :slug, 'T', '', 'rmse', '{}', 5, 2, 5, 5,"
                    " '2026-01-01 00:00:00+00', :creator, '2026-01-02 00:00:00+00')"
                ),
                {"id": competition_id, "slug": slug, "creator": creator},
            )
    command.upgrade(alembic_config(url), "head")
    with eng.connect() as conn:
        hosts = conn.execute(
            text("SELECT competition_id, user_id, role FROM competition_hosts ORDER BY 1")
        ).all()
        kept = conn.execute(text("SELECT slug FROM competitions ORDER BY id")).scalars().all()
    eng.dispose()
    assert [tuple(h) for h in hosts] == [(1, 1, "owner"), (2, 2, "owner"), (3, 1, "owner")]
    assert kept == ["one", "two", "three"]


def test_upgrade_to_0012_remembers_removed_cohosts_and_ends_old_sessions(empty_database_url):
    from alembic import command

    url = empty_database_url
    command.upgrade(alembic_config(url), "0011")
    eng = make_engine(url)
    when = "'2026-01-01 00:00:00+00'"
    with eng.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO users (id, name, role, created_at) VALUES"
                f" (1, 'ada', 'organiser', {when}), (2, 'carl', 'participant', {when}),"
                f" (3, 'dora', 'participant', {when})"
            )
        )
        conn.execute(
            text(
                "INSERT INTO competitions (id, slug, title, description, metric_name,"
                " metric_params, daily_submission_limit, final_selection_limit,"
                " max_team_size, score_decimals, start, created_by_id, created_at)"
                f" VALUES (1, 'one', 'T', '', 'rmse', '{{}}', 5, 2, 5, 5, {when}, 1, {when})"
            )
        )
        conn.execute(
            text(
                "INSERT INTO audit_entries (competition_id, actor_id, action, target, created_at)"
                f" VALUES (1, 1, 'host_add', 'user carl', {when}),"
                f" (1, 1, 'host_remove', 'user carl', {when}),"
                f" (1, 1, 'host_add', 'user dora', {when})"
            )
        )
        conn.execute(
            text(
                "INSERT INTO web_sessions (user_id, token_hash, created_at, expires_at)"
                f" VALUES (2, 'h', {when}, '2099-01-01 00:00:00+00')"
            )
        )
    command.upgrade(alembic_config(url), "head")
    with eng.connect() as conn:
        former = conn.execute(text("SELECT competition_id, user_id FROM former_hosts")).all()
        sessions = conn.execute(text("SELECT count(*) FROM web_sessions")).scalar()
    eng.dispose()
    assert [tuple(f) for f in former] == [(1, 2)]
    assert sessions == 0
