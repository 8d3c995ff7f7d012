"""Drafts, published and archived competitions: a draft is its hosts' alone on every route; an
archived one is read-only and listed apart."""

import base64

import pytest

from tests.helpers import API, PERFECT, create_competition, submit, upload_key

KAGGLE = f"{API}/competitions.CompetitionApiService"


def _basic(caller) -> dict[str, str]:  # type: ignore[no-untyped-def]
    raw = f"{caller.name}:{caller.token}".encode()
    return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


@pytest.fixture
def other_host(make_user):  # type: ignore[no-untyped-def]
    """An organiser who hosts a competition of their own, not the draft."""
    return make_user("olga", organiser=True)


@pytest.fixture
def draft(client, host):  # type: ignore[no-untyped-def]
    body = create_competition(client, host.headers, "secret", status="draft")
    assert upload_key(client, host.headers, "secret").status_code == 201
    put = client.put(
        f"{API}/competitions/secret/files/train.csv", content=b"id,x\n1,2\n", headers=host.headers
    )
    assert put.status_code == 201, put.text
    return body


def test_a_competition_is_published_unless_created_as_a_draft(client, host, draft):
    assert draft["status"] == "draft"
    assert create_competition(client, host.headers, "open")["status"] == "published"


def test_a_draft_is_seen_and_listed_by_its_host(client, host, draft):
    assert client.get(f"{API}/competitions/secret", headers=host.headers).status_code == 200
    listed = client.get(f"{API}/competitions", headers=host.headers).json()
    assert [c["slug"] for c in listed] == ["secret"]
    sample = client.get(f"{API}/competitions/secret/sample-submission", headers=host.headers)
    assert sample.status_code == 200 and sample.text.startswith("id,target")


API_READS = [
    "/competitions/secret",
    "/competitions/secret/sample-submission",
    "/competitions/secret/files",
    "/competitions/secret/files/train.csv",
    "/competitions/secret/leaderboard",
    "/competitions/secret/leaderboard.csv",
    "/competitions/secret/submissions",
    "/competitions/secret/quota",
    "/competitions/secret/team",
    "/competitions/secret/checklist",
    "/competitions/secret/answer-key/versions",
]


@pytest.mark.parametrize("who", ["alice", "olga"])
def test_a_draft_is_a_404_for_everyone_else_on_every_api_route(
    client, draft, alice, other_host, who
):
    caller = {"alice": alice, "olga": other_host}[who]
    create_competition(client, other_host.headers, "olgas")
    for path in API_READS:
        response = client.get(API + path, headers=caller.headers)
        assert response.status_code == 404, (path, response.text)
        assert response.json()["code"] == "not_found"
    listed = client.get(f"{API}/competitions", headers=caller.headers).json()
    assert "secret" not in [c["slug"] for c in listed]
    for method, path in [
        ("post", "/competitions/secret/join"),
        ("post", "/competitions/secret/publish"),
        ("post", "/competitions/secret/archive"),
        ("delete", "/competitions/secret"),
        ("patch", "/competitions/secret"),
    ]:
        response = client.request(method.upper(), API + path, headers=caller.headers, json={})
        assert response.status_code == 404, (path, response.text)
    assert submit(client, caller.headers, PERFECT, "secret").status_code == 404


def test_a_draft_sample_submission_is_a_404_without_a_token(client, draft):
    assert client.get(f"{API}/competitions/secret/sample-submission").status_code == 404


@pytest.mark.parametrize("board", ["public", "private"])
def test_a_drafts_boards_are_a_404_without_a_token(client, draft, board):
    # The public boards need no token; a draft's are still its hosts' alone.
    for path in ("/competitions/secret/leaderboard", "/competitions/secret/leaderboard.csv"):
        response = client.get(f"{API}{path}?board={board}")
        assert response.status_code == 404, (path, response.text)
        assert response.json()["code"] == "not_found"


def test_a_draft_takes_only_its_hosts_baselines(client, host, draft, alice):
    response = submit(client, host.headers, PERFECT, "secret", baseline=True)
    assert response.status_code == 202, response.text
    assert submit(client, alice.headers, PERFECT, "secret").status_code == 404


def test_a_draft_is_invisible_to_the_kaggle_client(client, host, draft, alice):
    listed = client.post(f"{KAGGLE}/ListCompetitions", json={}, headers=_basic(alice))
    assert listed.status_code == 200
    assert listed.json()["competitions"] == []
    for method in (
        "ListDataFiles",
        "DownloadDataFile",
        "DownloadDataFiles",
        "ListSubmissions",
        "GetLeaderboard",
        "GetSubmissionLimits",
        "DownloadLeaderboard",
    ):
        response = client.post(
            f"{KAGGLE}/{method}",
            json={"competitionName": "secret", "fileName": "train.csv"},
            headers=_basic(alice),
            follow_redirects=False,
        )
        assert response.status_code == 404, (method, response.text)
    upload = client.post(
        f"{KAGGLE}/StartSubmissionUpload",
        json={"competitionName": "secret", "contentLength": 10, "fileName": "p.csv"},
        headers=_basic(alice),
    )
    assert upload.status_code == 404
    mine = client.post(f"{KAGGLE}/ListCompetitions", json={}, headers=_basic(host))
    assert [c["ref"] for c in mine.json()["competitions"]] == ["secret"]


def test_a_draft_is_unlisted_and_a_404_on_the_pages(client, draft):
    assert "secret" not in client.get("/").text
    for path in (
        "/c/secret",
        "/c/secret/data",
        "/c/secret/leaderboard",
        "/c/secret/data/sample-submission.csv",
        "/c/secret/data/files/train.csv",
        "/c/secret/evaluation",
    ):
        assert client.get(path).status_code == 404, path


# --- archived -------------------------------------------------------------------------------


@pytest.fixture
def archived(client, host, alice):  # type: ignore[no-untyped-def]
    create_competition(client, host.headers, "old")
    assert upload_key(client, host.headers, "old").status_code == 201
    assert client.post(f"{API}/competitions/old/join", headers=alice.headers).status_code == 201
    assert submit(client, alice.headers, PERFECT, "old").status_code == 202
    response = client.post(f"{API}/competitions/old/archive", headers=host.headers)
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "archived"


def test_only_the_owner_or_an_admin_archives(client, host, alice, other_host, make_user):
    create_competition(client, host.headers, "mine")
    for caller in (alice, other_host):
        response = client.post(f"{API}/competitions/mine/archive", headers=caller.headers)
        assert response.status_code == 403, response.text
    admin = make_user("root", admin=True)
    assert client.post(f"{API}/competitions/mine/archive", headers=admin.headers).status_code == 200


def test_an_archived_competition_is_read_only_for_everyone(client, host, alice, bob, archived):
    assert submit(client, alice.headers, PERFECT, "old").status_code == 409
    refused = [
        client.post(f"{API}/competitions/old/join", headers=bob.headers),
        client.patch(f"{API}/competitions/old", json={"title": "New"}, headers=host.headers),
        upload_key(client, host.headers, "old"),
        client.put(f"{API}/competitions/old/files/x.csv", content=b"a\n", headers=host.headers),
        client.post(f"{API}/competitions/old/archive", headers=host.headers),
        client.post(
            f"{KAGGLE}/StartSubmissionUpload",
            json={"competitionName": "old", "contentLength": 10, "fileName": "p.csv"},
            headers=_basic(alice),
        ),
    ]
    for response in refused:
        assert response.status_code == 409, response.text
        assert response.json().get("code") in ("archived", 409), response.text


def test_an_archived_competition_keeps_its_board_and_is_listed_apart(client, host, alice, archived):
    create_competition(client, host.headers, "live")
    board = client.get(f"{API}/competitions/old/leaderboard", headers=alice.headers)
    assert board.status_code == 200 and len(board.json()["rows"]) == 1
    listed = client.get(f"{API}/competitions", headers=alice.headers).json()
    assert {c["slug"]: c["status"] for c in listed} == {"old": "archived", "live": "published"}
    only = client.get(f"{API}/competitions?status=archived", headers=alice.headers).json()
    assert [c["slug"] for c in only] == ["old"]
    bad = client.get(f"{API}/competitions?status=gone", headers=alice.headers)
    assert bad.status_code == 422
    home = client.get("/").text
    assert home.index('id="archived"') < home.index("/c/old")
    assert home.index("/c/live") < home.index('id="archived"')


def test_a_hidden_submission_of_an_archived_competition_stays_as_it_is(
    client, host, alice, archived
):
    mine = client.get(f"{API}/competitions/old/submissions", headers=host.headers).json()
    response = client.post(f"{API}/submissions/{mine[0]['id']}/hide", headers=host.headers)
    assert response.status_code == 409 and response.json()["code"] == "archived"


def test_the_migration_keeps_existing_competitions_published(tmp_path):
    from alembic import command
    from sqlalchemy import text

    from app.db import make_engine
    from app.migrate import alembic_config

    url = f"sqlite:///{tmp_path}/old.db"
    command.upgrade(alembic_config(url), "0011")
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO users (id, name, role, created_at)"
                " VALUES (1, 'h', 'organiser', '2026-01-01 00:00:00')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO competitions (id, slug, title, description, metric_name,"
                " metric_params, daily_submission_limit, final_selection_limit, max_team_size,"
                " score_decimals, start, public_board_mode, score_intervals, created_by_id,"
                " created_at) VALUES (1, 'old', 'Old', '', 'rmse', '{}', 5, 2, 5, 5,"
                " '2026-01-01 00:00:00', 'exact', 1, 1, '2026-01-01 00:00:00')"
            )
        )
    command.upgrade(alembic_config(url), "head")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT status FROM competitions")).scalar_one() == "published"
    command.downgrade(alembic_config(url), "0011")
    engine.dispose()


def test_the_kaggle_client_sees_an_archived_competition_closed(client, alice, archived):
    listed = client.post(f"{KAGGLE}/ListCompetitions", json={}, headers=_basic(alice)).json()
    assert [(c["ref"], c["submissionsDisabled"]) for c in listed["competitions"]] == [("old", True)]
