"""The pages' forms without a browser: each calls the same service as the API and comes back to
its page with the outcome, and the pages show what the rules allow each viewer to see."""

from datetime import UTC, datetime, timedelta

from tests.helpers import (
    PERFECT,
    PRIVATE_WRONG,
    PUBLIC_HALF,
    close_now,
    csv_bytes,
    ready_competition,
    submit,
)

FUTURE = (datetime.now(UTC) + timedelta(days=7)).isoformat()
API = "/api/v1"


def _file(content: bytes, name: str = "sub.csv"):  # type: ignore[no-untyped-def]
    return {"file": (name, content, "text/csv")}


def test_upload_by_plain_form_goes_back_to_the_list_with_the_submission_scored(
    client, person, browser
):
    ready_competition(client, person("host", organiser=True).headers)
    ada = person("ada")
    web = browser("ada")
    response = web.post(
        "/c/churn/submissions",
        page="/c/churn/submissions",
        data={"description": "first try"},
        files=_file(PERFECT),
    )
    assert response.status_code == 303 and response.headers["location"] == "/c/churn/submissions"
    page = web.get("/c/churn/submissions").text
    assert "is queued for scoring" in page and "first try" in page and "scored" in page
    assert "4</strong> of 5 left today" in page
    rows = client.get(f"{API}/competitions/churn/submissions", headers=ada.headers).json()
    assert [r["description"] for r in rows] == ["first try"]


def test_upload_by_script_gets_json_and_the_poll_shows_status_and_quota(client, person, browser):
    ready_competition(client, person("host", organiser=True).headers)
    person("ada")
    web = browser("ada")
    token = web.token_on("/c/churn/submissions")
    response = web.http.post(
        "/c/churn/submissions",
        data={"csrf_token": token},
        files=_file(PUBLIC_HALF),
        headers={"Accept": "application/json"},
    )
    assert response.status_code == 202 and response.json()["status"] == "queued"
    poll = web.get("/c/churn/submissions.json", headers={"Accept": "application/json"}).json()
    assert poll["submissions"][0]["status"] == "scored"
    assert poll["submissions"][0]["public_score"] == 0.5
    assert poll["quota"]["remaining_today"] == 4


def test_a_refused_upload_comes_back_with_the_reason(client, person, browser):
    ready_competition(client, person("host", organiser=True).headers)
    person("ada")
    web = browser("ada")
    bad = csv_bytes(["id", "prediction"], ["a", 1])
    response = web.post("/c/churn/submissions", page="/c/churn/submissions", files=_file(bad))
    assert response.status_code == 303
    page = web.get("/c/churn/submissions").text
    assert "flash error" in page and "missing column(s)" in page
    script = web.http.post(
        "/c/churn/submissions",
        data={"csrf_token": web.token_on("/c/churn/submissions")},
        files=_file(bad),
        headers={"Accept": "application/json"},
    )
    assert script.status_code == 422 and "missing column(s)" in script.json()["detail"]


def test_signed_out_visitors_are_sent_to_sign_in_and_scripts_get_401(client, host, browser):
    ready_competition(client, host.headers)
    web = browser()
    page = web.get("/c/churn/submissions", follow_redirects=False)
    assert page.status_code == 303
    assert page.headers["location"] == "/signin?next=/c/churn/submissions"
    poll = web.get("/c/churn/submissions.json", headers={"Accept": "application/json"})
    assert poll.status_code == 401


def test_select_and_unselect_a_final_submission_by_form(client, person, browser):
    ready_competition(client, person("host", organiser=True).headers, deadline=FUTURE)
    ada = person("ada")
    sid = submit(client, ada.headers, PERFECT).json()["id"]
    web = browser("ada")
    page = "/c/churn/submissions"
    url = f"/c/churn/submissions/{sid}/select"
    assert web.post(url, page=page, data={"selected": "true"}).status_code == 303
    assert "★ Selected" in web.get(page).text
    assert client.get(f"{API}/submissions/{sid}", headers=ada.headers).json()["selected"] is True
    web.post(url, page=page, data={"selected": "false"})
    assert client.get(f"{API}/submissions/{sid}", headers=ada.headers).json()["selected"] is False


def test_team_invitation_declined_by_form(client, person, browser):
    ready_competition(client, person("host", organiser=True).headers)
    person("ada")
    person("bob")
    ada = browser("ada")
    ada.post("/c/churn/join", page="/c/churn/team")
    ada.post("/c/churn/team/invitations", page="/c/churn/team", data={"invitee": "bob"})
    bob = browser("bob")
    text = bob.get("/c/churn/team").text
    assert "Team <strong>ada</strong>" in text
    invitation_id = text.split("/invitations/")[1].split("/")[0]
    response = bob.post(f"/c/churn/invitations/{invitation_id}/decline", page="/c/churn/team")
    assert response.status_code == 303
    assert "Invitation declined" in bob.get("/c/churn/team").text
    again = bob.post(f"/c/churn/invitations/{invitation_id}/accept", page="/c/churn/team")
    assert again.status_code == 303
    assert "no longer pending" in bob.get("/c/churn/team").text


def test_leaderboard_marks_your_team_and_baselines_and_pages(client, person, browser, monkeypatch):
    host = person("host", organiser=True)
    ready_competition(client, host.headers)
    ada, bob = person("ada"), person("bob")
    submit(client, ada.headers, PUBLIC_HALF)
    submit(client, bob.headers, PERFECT)
    base = client.post(
        f"{API}/competitions/churn/submissions",
        files=_file(PRIVATE_WRONG),
        data={"baseline": "true"},
        headers=host.headers,
    )
    assert base.status_code == 202
    text = browser("ada").get("/c/churn/leaderboard").text
    mine = text.split('class=" mine"')[1].split("</tr>")[0]
    assert "ada" in mine and 'badge mine">you<' in mine
    assert 'badge baseline">baseline<' in text
    assert "higher is better" in text and "Submission time (UTC)" in text  # the chart
    monkeypatch.setattr("app.web.boards.BOARD_PAGE_SIZE", 1)
    second = browser().get("/c/churn/leaderboard?page=2").text
    assert "Page 2 of 3" in second and "bob" not in second.split("<tbody>")[1].split("</tbody>")[0]


def test_private_board_only_after_the_deadline_except_for_the_host(
    client, person, browser, session_factory
):
    host = person("host", organiser=True)
    ready_competition(client, host.headers, deadline=FUTURE)
    person("olga", organiser=True)
    person("ada")
    submit(client, person("bob").headers, PUBLIC_HALF)
    for viewer in (browser(), browser("ada"), browser("olga")):
        page = viewer.get("/c/churn/leaderboard?board=private").text
        assert "Private leaderboard" not in page and "Public leaderboard" in page
        assert "0.50000" in page and "1.00000" not in page
    host_view = browser("host").get("/c/churn/leaderboard?board=private").text
    assert "Private leaderboard" in host_view and "host preview" in host_view
    close_now(session_factory)
    after = browser("ada").get("/c/churn/leaderboard?board=private").text
    assert "Private leaderboard" in after and "1.00000" in after


def test_host_changes_settings_by_form_and_the_audit_log_shows_it(client, person, browser):
    ready_competition(client, person("host", organiser=True).headers)
    web = browser("host")
    response = web.post(
        "/c/churn/host",
        page="/c/churn/host",
        data={"title": "Churn 2", "daily_submission_limit": "7", "deadline": "2031-01-02T03:04"},
    )
    assert response.status_code == 303
    saved = "Saved: daily_submission_limit, deadline (2031-01-02T03:04:00+00:00), title"
    assert saved in web.get("/c/churn/host").text
    shown = client.get(f"{API}/competitions/churn", headers={"Authorization": "Bearer x"})
    assert shown.status_code == 401  # (the API still wants a token)
    audit = web.get("/c/churn/host/audit").text
    assert "settings_change" in audit and "Churn 2" in audit
    bad = web.post("/c/churn/host", page="/c/churn/host", data={"daily_submission_limit": "lots"})
    assert bad.status_code == 303
    assert "is not a whole number" in web.get("/c/churn/host").text


def test_host_hides_a_submission_and_bans_a_team_by_form(client, person, browser):
    host = person("host", organiser=True)
    ready_competition(client, host.headers)
    ada = person("ada")
    sid = submit(client, ada.headers, PERFECT).json()["id"]
    web = browser("host")
    web.post(
        f"/c/churn/host/submissions/{sid}/hide",
        page="/c/churn/host/submissions",
        data={"hidden": "true"},
    )
    board = client.get(f"{API}/competitions/churn/leaderboard", headers=ada.headers).json()
    assert board["rows"] == []
    web.post(
        f"/c/churn/host/submissions/{sid}/hide",
        page="/c/churn/host/submissions",
        data={"hidden": "false"},
    )
    web.post(
        "/c/churn/host/teams/ban",
        page="/c/churn/host/teams",
        data={"team": "ada", "banned": "true", "reason": "sharing"},
    )
    board = client.get(f"{API}/competitions/churn/leaderboard", headers=ada.headers).json()
    assert board["rows"] == []
    assert "ban_team" in web.get("/c/churn/host/audit").text


def test_host_submission_page_refuses_a_submission_of_another_competition(client, person, browser):
    host = person("host", organiser=True)
    ready_competition(client, host.headers)
    ready_competition(client, host.headers, slug="other")
    sid = submit(client, person("ada").headers, PERFECT, slug="other").json()["id"]
    web = browser("host")
    assert web.get(f"/c/churn/host/submissions/{sid}").status_code == 404
    assert web.get(f"/c/other/host/submissions/{sid}").status_code == 200


def test_overview_data_and_evaluation_tabs(client, person, browser):
    ready_competition(
        client,
        person("host", organiser=True).headers,
        description="Predict **churn**.\n\n| a | b |\n|---|---|\n| 1 | 2 |",
    )
    web = browser()
    overview = web.get("/c/churn").text
    assert "<strong>churn</strong>" in overview and "<table>" in overview
    data = web.get("/c/churn/data").text
    assert "/c/churn/data/sample-submission.csv" in data
    sample = web.get("/c/churn/data/sample-submission.csv")
    assert sample.status_code == 200 and sample.text.splitlines()[0].replace('"', "") == "id,target"
    evaluation = web.get("/c/churn/evaluation").text
    assert 'href="/metrics#roc_auc"' in evaluation and "Higher scores are better" in evaluation
    assert 'id="roc_auc"' in web.get("/metrics").text


def test_host_publishes_a_data_file_and_participants_download_it(client, person, browser):
    ready_competition(client, person("host", organiser=True).headers)
    person("ada")
    host = browser("host")
    train = csv_bytes(["id", "x", "target"], ["t1", 0.5, 1], ["t2", 0.1, 0])
    response = host.post(
        "/c/churn/host/files",
        page="/c/churn/host/files",
        data={"name": "train.csv"},
        files=_file(train, "whatever.csv"),
    )
    assert response.status_code == 303
    assert "train.csv published" in host.get("/c/churn/host/files").text
    ada = browser("ada")
    tab = ada.get("/c/churn/data").text
    assert 'href="/c/churn/data/files/train.csv"' in tab
    download = ada.get("/c/churn/data/files/train.csv")
    assert download.status_code == 200 and download.content == train
    host.post("/c/churn/host/files/train.csv/delete", page="/c/churn/host/files")
    assert "published no data files" in ada.get("/c/churn/data").text
    assert ada.get("/c/churn/data/files/train.csv").status_code == 404


def test_data_files_stay_closed_before_the_start(client, person, browser):
    start = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    ready_competition(client, person("host", organiser=True).headers, start=start)
    host = browser("host")
    host.post(
        "/c/churn/host/files",
        page="/c/churn/host/files",
        data={"name": "train.csv"},
        files=_file(b"id,x\n1,2\n"),
    )
    visitor = browser()
    assert "the data opens with the competition" in visitor.get("/c/churn/data").text
    assert visitor.get("/c/churn/data/files/train.csv").status_code == 403
