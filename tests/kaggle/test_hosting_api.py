"""The kaggle client's host calls at the HTTP level: hostile and foreign payloads answer 4xx in
the client's own error shape (an integer ``code`` and a ``message``), never a 500, and a token
is good for its own user and kind of upload only."""

from sqlalchemy import select

from app.models import DataFile
from tests.helpers import API, KEY, create_competition
from tests.kaggle.test_api import basic, call

BLOBS = f"{API}/blobs.BlobApiService"


def start_blob(client, who, kind="DATASET", name="train.csv", size=10):  # type: ignore[no-untyped-def]
    body = {"type": kind, "name": name, "contentLength": size}
    return client.post(f"{BLOBS}/StartBlobUpload", json=body, headers=basic(who.name, who.token))


def uploaded(client, who, content, kind="DATASET"):  # type: ignore[no-untyped-def]
    started = start_blob(client, who, kind, size=len(content))
    assert started.status_code == 200, started.text
    put = client.put(started.json()["createUrl"], content=content)
    assert put.status_code == 200, put.text
    return started.json()["token"]


def refused(response, status: int, words: str) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == status and words in body["message"], body


def test_blob_uploads_are_for_hosts_and_for_data_and_solutions_only(client, host, alice):
    create_competition(client, host.headers)
    refused(start_blob(client, alice), 403, "only a competition's hosts upload")
    refused(start_blob(client, host, kind="MODEL"), 400, "not MODEL")
    refused(start_blob(client, host, size=10**15), 413, "upload limit")
    refused(
        client.post(f"{BLOBS}/SomethingElse", json={}, headers=basic("host", host.token)),
        404,
        "Podium does not implement BlobApiService/SomethingElse",
    )


def test_a_host_holds_only_so_many_files_not_yet_handed_over(client, host, monkeypatch):
    """Bytes PUT and never turned into data or a solution cannot fill the disk: past the budget
    of pending files a new upload is a 429 in the client's shape."""
    from app.kaggle import blobs

    monkeypatch.setattr(blobs, "MAX_PENDING_BLOBS", 2)
    create_competition(client, host.headers)
    uploaded(client, host, b"id,y\na,1\n")
    uploaded(client, host, b"id,y\nb,1\n")
    refused(start_blob(client, host), 429, "2 uploaded files not yet handed over")


def test_a_resumed_upload_starts_again_and_a_forged_url_is_not_found(client, host):
    create_competition(client, host.headers)
    url = start_blob(client, host).json()["createUrl"]
    asked = client.put(url, headers={"Content-Range": "bytes */10"})
    assert asked.status_code == 404  # the client then starts the file again
    assert (
        client.put(url, headers={"Content-Range": "bytes 5-9/10"}, content=b"x" * 5).status_code
        == 400
    )
    token = url.rsplit("/", 1)[1]
    forged = url.replace(token, token[:-2] + ("AA" if not token.endswith("AA") else "BB"))
    assert client.put(forged, content=b"x").status_code == 404


def test_an_upload_is_its_users_and_its_kinds(client, host, make_user, session_factory):
    create_competition(client, host.headers)
    other = make_user("carol", organiser=True)
    create_competition(client, {"Authorization": f"Bearer {other.token}"}, "carols")
    token = uploaded(client, host, b"id\n1\n")
    body = {
        "competitionName": "carols",
        "versionNotes": "v",
        "files": [{"name": "a.csv", "token": token}],
    }
    # Carol's own competition, host's upload: not hers to hand over.
    refused(
        call(client, "CreateCompetitionData", body, basic("carol", other.token)),
        404,
        "another user",
    )
    # Host's upload, carol's competition: not his to change.
    refused(
        call(client, "CreateCompetitionData", body, basic("host", host.token)),
        403,
        "only the hosts",
    )
    solution = {"competitionName": "churn", "blobToken": token}
    refused(
        call(client, "CreateCompetitionSolution", solution, basic("host", host.token)),
        400,
        "not as COMPETITION_SOLUTION",
    )
    key_token = uploaded(client, host, KEY, kind="COMPETITION_SOLUTION")
    as_data = {
        "competitionName": "churn",
        "versionNotes": "v",
        "files": [{"name": "k.csv", "token": key_token}],
    }
    refused(
        call(client, "CreateCompetitionData", as_data, basic("host", host.token)),
        400,
        "not as DATASET",
    )
    with session_factory() as session:
        assert session.scalars(select(DataFile)).all() == []


def test_data_names_are_checked_before_anything_is_stored(client, host, session_factory):
    create_competition(client, host.headers)
    token = uploaded(client, host, b"id\n1\n")
    for files, status, words in (
        ([{"name": "../x.csv", "token": token}], 400, "in a folder"),
        ([{"name": ".env", "token": token}], 422, "not a valid file name"),
        (
            [{"name": "a.csv", "token": token}, {"name": "a.csv", "token": token}],
            400,
            "named twice",
        ),
        ([{"name": "a.csv", "token": "garbage"}], 404, "invalid or has expired"),
        ([], 400, "files"),
    ):
        body = {"competitionName": "churn", "versionNotes": "v", "files": files}
        refused(
            call(client, "CreateCompetitionData", body, basic("host", host.token)), status, words
        )
    with session_factory() as session:
        assert session.scalars(select(DataFile)).all() == []


def test_hostile_host_calls_are_4xx_in_the_clients_shape(client, host, alice):
    create_competition(client, host.headers)
    auth = basic("host", host.token)
    for method, body, status, words in (
        ("CreateCompetition", {"title": "T", "slug": "s-1", "privacy": "SECRET"}, 400, "privacy"),
        ("CreateCompetition", {"title": "T", "slug": "churn"}, 409, "already exists"),
        ("CreateCompetition", {"title": ["x"], "slug": 5}, 400, "malformed"),
        ("UpdateCompetitionSettings", {"competitionName": "churn"}, 400, "no settings"),
        (
            "UpdateCompetitionSettings",
            {"competitionName": "churn", "settings": "x", "updateMask": "title"},
            400,
            "malformed",
        ),
        (
            "UpdateCompetitionSettings",
            {
                "competitionName": "churn",
                "updateMask": "deadline",
                "settings": {"deadline": "soon"},
            },
            400,
            "malformed",
        ),
        (
            "CreateCompetitionPage",
            {"competitionName": "churn", "page": {"name": "../../etc"}},
            404,
            "Podium has no page",
        ),
        (
            "UpdateCompetitionPage",
            {"competitionName": "churn", "pageName": "description"},
            400,
            "nothing to update",
        ),
        (
            "DeleteCompetitionPage",
            {"competitionName": "nope", "pageName": "rules"},
            404,
            "no competition",
        ),
        ("GetCompetitionSolutionStatus", {"competitionName": "churn"}, 200, ""),
    ):
        response = call(client, method, body, auth)
        if status == 200:
            assert response.status_code == 200 and response.json() == {"ready": False}
            continue
        refused(response, status, words)
    refused(
        call(client, "GetCompetitionSolutionStatus", {"competitionName": "churn"}, alice.headers),
        403,
        "only the hosts",
    )


def test_a_call_too_large_for_the_gate_answers_in_the_clients_shape(client, host, settings):
    create_competition(client, host.headers)
    text = "x" * (settings.max_request_bytes + 10)
    body = {
        "competitionName": "churn",
        "pageName": "description",
        "page": {"content": text},
        "updateMask": "content",
    }
    refused(
        call(client, "UpdateCompetitionPage", body, basic("host", host.token)), 413, "larger than"
    )


def test_a_bug_answers_a_sentence_in_the_clients_shape_not_its_traceback(client, host, monkeypatch):
    from app.kaggle import router

    def broken(*_args):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug")

    request_type, _handler = router.METHODS["GetCompetitionSolutionStatus"]
    monkeypatch.setitem(router.METHODS, "GetCompetitionSolutionStatus", (request_type, broken))
    create_competition(client, host.headers)
    response = call(
        client,
        "GetCompetitionSolutionStatus",
        {"competitionName": "churn"},
        basic("host", host.token),
    )
    refused(response, 500, "the server's log says why")


def test_the_clients_other_services_answer_a_sentence_and_other_routes_are_untouched(client, host):
    create_competition(client, host.headers)
    other = client.post(f"{API}/datasets.DatasetApiService/ListDatasets", json={})
    refused(other, 404, "Podium does not implement datasets.DatasetApiService/ListDatasets")
    # A path of the same shape that is no kaggle service keeps Podium's own answers.
    assert (
        client.post(f"{API}/competitions/churn", json={}, headers=host.headers).status_code == 405
    )
    assert client.post(f"{API}/nothing.here/x", json={}).json()["code"] == "not_found"


def test_team_submissions_show_the_ladders_released_score_not_the_exact_one(
    client, host, alice, bob, session_factory
):
    from app.honest.engine.ladder import on_grid
    from app.models import Team
    from tests.honest.board.test_api import _competition, _predictions, _submit

    _competition(client, host, public_board_mode="ladder", ladder_step=0.25)
    submission_id = _submit(client, alice, _predictions(14))  # exactly 0.7 on the public rows
    with session_factory() as session:
        team_id = session.scalar(select(Team.id).where(Team.name == "alice"))
    body = {"teamId": team_id}
    seen = call(client, "ListTeamPublicSubmissions", body, bob.headers).json()["submissions"]
    assert [(s["id"], float(s["publicScore"])) for s in seen] == [
        (submission_id, on_grid(0.7, 0.25))
    ]
    exact = call(client, "ListTeamPublicSubmissions", body, host.headers).json()["submissions"]
    assert [float(s["publicScore"]) for s in exact] == [0.7]
