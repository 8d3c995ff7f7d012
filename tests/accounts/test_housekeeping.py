"""What strangers leave behind is cleared: spent links, and sign-ups nobody verified in a week
(never an account that took part, nor a verified one)."""

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from app.accounts import links
from app.accounts.housekeeping import housekeeping
from app.db import make_engine, make_session_factory, unit_of_work
from app.models import LinkSecret, Role, User


def test_housekeeping_clears_spent_links_and_stale_sign_ups_and_nothing_else(fresh_database_url):
    engine = make_engine(fresh_database_url)
    factory = make_session_factory(engine)
    old = datetime.now(UTC) - timedelta(days=8)
    with unit_of_work(factory) as session:
        session.add_all(
            [
                User(name="stale", role=Role.participant, must_verify=True, created_at=old),
                User(name="fresh", role=Role.participant, must_verify=True),
                User(
                    name="verified",
                    role=Role.participant,
                    must_verify=True,
                    created_at=old,
                    email="v@example.org",
                    email_verified_at=old,
                ),
                User(name="made_by_admin", role=Role.participant, created_at=old),
            ]
        )
        live = links.issue(
            session, purpose=links.INVITE, secret_key="k", lifetime=timedelta(days=1)
        )
        links.issue(session, purpose=links.INVITE, secret_key="k", lifetime=timedelta(seconds=-1))
        links.issue(
            session,
            purpose=links.RESET_PASSWORD,
            secret_key="k",
            lifetime=timedelta(hours=1),
            uses=0,
        )
    assert housekeeping(factory) == (2, 1)
    assert housekeeping(factory) == (0, 0)  # safe to run twice
    with factory() as session:
        names = set(session.scalars(select(User.name)))
        kept = session.scalars(select(LinkSecret.id)).all()
    assert names == {"fresh", "verified", "made_by_admin"}
    assert kept == [live.row.id]
    engine.dispose()
