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


def _rows_at(conn, *, standings: bool) -> None:  # type: ignore[no-untyped-def]
    """A competition as an older revision kept it: a key, teams, submissions (one selected,
    one hidden), scores and (from 0007 on) the standings that revision's code computed."""
    at = "'2026-01-01 00:00:0{}+00'".format
    conn.execute(
        text(
            "INSERT INTO users (id, name, role, created_at) VALUES"
            f" (1, 'ada', 'organiser', {at(0)}), (2, 'alice', 'participant', {at(0)}),"
            f" (3, 'bob', 'participant', {at(0)}), (4, 'carl', 'participant', {at(0)})"
        )
    )
    conn.execute(
        text(
            "INSERT INTO competitions (id, slug, title, description, metric_name,"
            " metric_params, daily_submission_limit, final_selection_limit, max_team_size,"
            " score_decimals, start, deadline, created_by_id, created_at)"
            f" VALUES (1, 'old', 'Old', '', 'roc_auc', '{{}}', 5, 1, 5, 5, {at(0)},"
            f" '2026-02-01 00:00:00+00', 1, {at(0)})"
        )
    )
    conn.execute(
        text(
            "INSERT INTO answer_keys (id, competition_id, version, path, sha256, id_column,"
            " target_columns, n_rows, n_public, n_private, uploaded_by_id, created_at,"
            f" published_at) VALUES (1, 1, 1, 'k', 'h', 'id', '[\"target\"]', 6, 3, 3, 1,"
            f" {at(0)}, {at(0)})"
        )
    )
    for team_id, name in ((1, "alice"), (2, "bob"), (3, "carl")):
        conn.execute(
            text(
                "INSERT INTO teams (id, competition_id, name, created_at, leader_id)"
                f" VALUES ({team_id}, 1, '{name}', {at(0)}, {team_id + 1})"
            )
        )
        conn.execute(
            text(
                "INSERT INTO team_members (team_id, competition_id, user_id, joined_at)"
                f" VALUES ({team_id}, 1, {team_id + 1}, {at(0)})"
            )
        )
    # (id, team, public, private, selected, hidden): alice's best public stands on the public
    # board and, none selected with a limit of 1, on the private one too; bob selected #3.
    rows = [
        (1, 1, 0.80, 0.60, False, False),
        (2, 1, 0.90, 0.50, False, False),
        (3, 2, 0.85, 0.95, True, False),
        (4, 2, 0.95, 0.40, False, False),
        (5, 3, 0.90, 0.70, False, False),
        (6, 3, 0.99, 0.99, False, True),
    ]
    for sid, team, public, private, selected, hidden in rows:
        conn.execute(
            text(
                "INSERT INTO submissions (id, competition_id, team_id, user_id, description,"
                " filename, path, size_bytes, sha256, status, selected, hidden, created_at)"
                f" VALUES ({sid}, 1, {team}, {team + 1}, '', 's.csv', 's{sid}', 1, 'h',"
                f" 'scored', {selected}, {hidden}, {at(sid)})"
            )
        )
        conn.execute(
            text(
                "INSERT INTO scores (submission_id, answer_key_id, score, public_score,"
                f" private_score, created_at) VALUES ({sid}, 1, {public}, {public}, {private},"
                f" {at(sid)})"
            )
        )
    if not standings:
        return
    rows_on_boards = [
        ("public", 2, 4, 0.95),
        ("public", 1, 2, 0.90),
        ("public", 3, 5, 0.90),
        ("private", 2, 3, 0.95),
        ("private", 3, 5, 0.70),
        ("private", 1, 2, 0.50),
    ]
    for board, team, sid, score in rows_on_boards:
        entries = 3 if team == 3 else 2
        conn.execute(
            text(
                "INSERT INTO standings (competition_id, answer_key_id, board, team_id,"
                " submission_id, score, order_key, submitted_at, baseline, entries,"
                f" last_submission_at) VALUES (1, 1, '{board}', {team}, {sid}, {score},"
                f" {-score}, {at(sid)}, false, {entries}, {at(6 if team == 3 else 2 * team)})"
            )
        )


@pytest.mark.parametrize("revision", ["0013", "0006"])
def test_upgrade_to_0014_keeps_every_board(empty_database_url, tmp_path, revision):
    """Every competition becomes one phase `main` and one column named after its metric; its
    boards read the same before and after, and the new standings code recomputes them equal.
    From 0006, the standings are first filled by 0007's own rules."""
    from alembic import command
    from sqlalchemy.orm import sessionmaker

    from app.config import Settings
    from app.leaderboard.standings import rebuild
    from app.main import create_app
    from app.models import Competition
    from tests.asgi_client import TestClient

    url = empty_database_url
    command.upgrade(alembic_config(url), revision)
    eng = make_engine(url)
    with eng.begin() as conn:
        _rows_at(conn, standings=revision >= "0007")
    command.upgrade(alembic_config(url), "head")
    factory = sessionmaker(bind=eng, expire_on_commit=False)
    settings = Settings(
        env="test", database_url=url, data_dir=tmp_path / "data", secret_key="s" * 32
    )

    def boards() -> dict[str, list[tuple[object, ...]]]:
        with TestClient(create_app(settings, session_factory=factory)) as client:
            found = {}
            for board in ("public", "private"):
                body = client.get(f"/api/v1/competitions/old/leaderboard?board={board}").json()
                assert body["phase"] == "main" and body["sort"] == "roc_auc", body
                found[board] = [(r["rank"], r["team"], r["score"]) for r in body["rows"]]
            return found

    expected = {
        "public": [(1, "bob", 0.95), (2, "alice", 0.9), (3, "carl", 0.9)],
        "private": [(1, "bob", 0.95), (2, "carl", 0.7), (3, "alice", 0.5)],
    }
    assert boards() == expected
    with factory() as session:
        competition = session.get(Competition, 1)
        assert [p.name for p in competition.phases] == ["main"]
        assert competition.phases[0].final_selection_limit == 1
        assert {k.phase_id for k in competition.answer_keys} == {competition.phases[0].id}
        rebuild(session, competition)
        session.commit()
    assert boards() == expected
    eng.dispose()


def test_upgrade_to_0018_keeps_every_user_token_and_session(empty_database_url):
    """Accounts: users of today's shape keep their tokens and sessions, have no address and
    nothing to verify, and are active; addresses are unique from then on."""
    from alembic import command

    from app.auth.service import user_for_token, web_session_for
    from app.auth.tokens import hash_token
    from app.db import make_session_factory

    url = empty_database_url
    command.upgrade(alembic_config(url), "0017")
    eng = make_engine(url)
    when = "'2026-01-01 00:00:00+00'"
    with eng.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO users (id, name, role, password_hash, created_at) VALUES"
                f" (1, 'ada', 'organiser', NULL, {when}), (2, 'carl', 'participant', NULL, {when})"
            )
        )
        conn.execute(
            text(
                "INSERT INTO api_tokens (user_id, token_hash, prefix, created_at) VALUES"
                f" (2, '{hash_token('pdm_carl', secret_key='k')}', 'pdm_carl', {when})"
            )
        )
        conn.execute(
            text(
                "INSERT INTO web_sessions (user_id, token_hash, created_at, expires_at, last_seen_at)"
                f" VALUES (1, '{hash_token('cookie', secret_key='k')}', {when},"
                f" '2099-01-01 00:00:00+00', {when})"
            )
        )
    command.upgrade(alembic_config(url), "head")
    with make_session_factory(eng)() as session:
        carl = user_for_token(session, token="pdm_carl", secret_key="k")
        assert (carl.name, carl.email, carl.state.value) == ("carl", None, "active")
        assert carl.may_take_part and not carl.must_verify
        live = web_session_for(session, secret="cookie", secret_key="k")
        assert live is not None and live.user.name == "ada"
    with eng.begin() as conn:
        conn.execute(text("UPDATE users SET email = 'a@example.org' WHERE id = 1"))
    with pytest.raises(Exception, match="(?i)unique"), eng.begin() as conn:
        conn.execute(text("UPDATE users SET email = 'a@example.org' WHERE id = 2"))
    eng.dispose()
