from fastapi.testclient import TestClient

from app.config import Settings
from app.demo import DEMO_SLUG, seed_demo
from app.main import create_app
from app.migrate import upgrade


def test_demo_seeds_a_keyed_competition_with_scored_submissions(tmp_path):
    settings = Settings(
        env="test",
        database_url=f"sqlite:///{tmp_path}/demo.db",
        data_dir=tmp_path / "data",
        scoring_backend="eager",
    )
    upgrade(settings.database_url)
    report = seed_demo(settings)
    tokens = {line.split()[0]: line.split()[-1] for line in report.splitlines() if "pdm_" in line}
    assert set(tokens) == {"demo-host", "alice", "bob", "carol"}

    with TestClient(create_app(settings)) as client:
        headers = {"Authorization": f"Bearer {tokens['alice']}"}
        board = client.get(f"/api/v1/competitions/{DEMO_SLUG}/leaderboard", headers=headers).json()
        # More signal, better AUC: the seeded models rank in the order they were built.
        assert [row["team"] for row in board["rows"]] == ["alice", "bob", "carol"]
        assert all(0.5 < row["score"] <= 1.0 for row in board["rows"])

    # Contract changed by issue 9: a second run printed fresh tokens "(shown once)" while the
    # old ones kept working. Now it prints no secret, and the first run's tokens still work.
    again = seed_demo(settings)
    assert "already seeded" in again and "pdm_" not in again
    assert "podium users token" in again
    with TestClient(create_app(settings)) as client:
        for name, token in tokens.items():
            me = client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
            assert me.status_code == 200 and me.json()["name"] == name
