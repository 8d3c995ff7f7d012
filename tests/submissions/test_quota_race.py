"""Quotas hold under concurrency: simultaneous uploads from one team accept exactly what is left."""

from concurrent.futures import ThreadPoolExecutor

from app.auth.service import create_user
from app.config import Settings
from app.db import make_engine, make_session_factory, unit_of_work
from app.main import create_app
from app.models import Role
from tests.asgi_client import TestClient
from tests.helpers import API, PERFECT, ParkedQueue, ready_competition, submit


def test_fifty_concurrent_uploads_with_five_left_accept_exactly_five(fresh_database_url, tmp_path):
    settings = Settings(
        env="test", database_url=fresh_database_url, data_dir=tmp_path / "data", secret_key="k" * 32
    )
    engine = make_engine(fresh_database_url)
    factory = make_session_factory(engine)
    tokens = {}
    with unit_of_work(factory) as session:
        for name, role in (("host", Role.organiser), ("alice", Role.participant)):
            tokens[name] = create_user(
                session, name=name, role=role, secret_key=settings.secret_key
            )[1]
    host = {"Authorization": f"Bearer {tokens['host']}"}
    alice = {"Authorization": f"Bearer {tokens['alice']}"}

    with TestClient(
        create_app(settings, session_factory=factory, scoring_queue=ParkedQueue())
    ) as client:
        ready_competition(client, host, daily_submission_limit=8)
        for _ in range(3):
            assert submit(client, alice, PERFECT).status_code == 202
        assert (
            client.get(f"{API}/competitions/churn/quota", headers=alice).json()["remaining_today"]
            == 5
        )

        with ThreadPoolExecutor(max_workers=50) as pool:
            codes = list(pool.map(lambda _: submit(client, alice, PERFECT).status_code, range(50)))

        assert codes.count(202) == 5, codes
        assert codes.count(429) == 45, codes
        quota = client.get(f"{API}/competitions/churn/quota", headers=alice).json()
        assert quota["used_today"] == 8 and quota["remaining_today"] == 0
        assert len(client.get(f"{API}/competitions/churn/submissions", headers=alice).json()) == 8
    engine.dispose()
