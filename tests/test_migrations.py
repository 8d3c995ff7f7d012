"""The Alembic chain is the only way the schema is built: it must match the models exactly."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

import app.models  # noqa: F401
from app.db import Base, make_engine
from app.migrate import alembic_config


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
