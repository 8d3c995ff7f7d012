"""The pages of a competition with phases and several columns: phase tabs with dates and state,
a board with one column per visible column whose headers sort, a blind board that says when
scores appear and shows nothing of any score (rows, chart, shake-up, My submissions), a hidden
board for hosts only, and the upload form's phase choice and the phase's quota."""

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update

from app.models import Phase
from tests.helpers import API, csv_bytes

NOW = datetime.now(UTC)
PAST = (NOW - timedelta(days=10)).isoformat()
NEXT_WEEK = (NOW + timedelta(days=7)).isoformat()
LATER = (NOW + timedelta(days=14)).isoformat()

KEY = csv_bytes(
    ["id", "y", "Usage"],
    ["a", 1.0, "Public"],
    ["b", 2.0, "Public"],
    ["c", 3.0, "Private"],
    ["d", 4.0, "Private"],
)
COLUMNS = [
    {"key": "rmse", "title": "RMSE", "metric": {"name": "rmse"}},
    {"key": "mae", "title": "MAE", "metric": {"name": "mae"}, "precision": 2},
]
# Public errors 0.37 and 0: RMSE 0.2616..., MAE 0.185 (shown 0.18 or 0.19 at precision 2);
# private errors 0.2 and 0: RMSE 0.1414... Digits that appear nowhere else on a page.
ALICE = csv_bytes(["id", "y"], ["a", 1.37], ["b", 2], ["c", 3.2], ["d", 4])
SECRETS = ("0.2616", "0.185", "0.1414", "0.18", "0.19")
# Public errors 0.5 and 0.5: RMSE 0.5, MAE 0.5 (worse than alice's on both).
BOB = csv_bytes(["id", "y"], ["a", 1.5], ["b", 2.5], ["c", 3], ["d", 4])


def _competition(client, host, *, phases: list[dict[str, Any]], columns=COLUMNS, slug="reg"):
    body = {"slug": slug, "title": "Regression", "columns": columns, "phases": phases}
    response = client.post(f"{API}/competitions", json=body, headers=host.headers)
    assert response.status_code == 201, response.text
    for phase in phases:
        key = client.put(
            f"{API}/competitions/{slug}/phases/{phase['name']}/answer-key",
            files={"file": ("key.csv", KEY, "text/csv")},
            headers=host.headers,
        )
        assert key.status_code == 201, key.text


def _submit(client, caller, content, slug="reg", **data: Any) -> int:
    response = client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": ("sub.csv", content, "text/csv")},
        data=data,
        headers=caller.headers,
    )
    assert response.status_code == 202, response.text
    return int(response.json()["id"])


def _set_phase(session_factory, name: str, **fields: Any) -> None:
    with session_factory() as session:
        session.execute(update(Phase).where(Phase.name == name).values(**fields))
        session.commit()


def _tbody(html: str) -> str:
    return html.split("<tbody>")[1].split("</tbody>")[0]


def _no_score(html: str) -> None:
    for secret in SECRETS:
        # A score, not the digits of a time (an ISO time's seconds read "10.18...").
        assert not re.search(r"(?<![\d.])" + re.escape(secret), html), secret


@pytest.fixture
def people(person):  # type: ignore[no-untyped-def]
    return person("host", organiser=True), person("alice"), person("bob")


# -- the board --------------------------------------------------------------------------------


def test_the_board_has_phase_tabs_with_dates_and_state_and_a_column_each(client, people, browser):
    host, alice, bob = people
    _competition(
        client,
        host,
        phases=[
            {"name": "dev", "title": "Development", "start": PAST, "end": NEXT_WEEK},
            {"name": "final", "title": "Final", "start": NEXT_WEEK, "end": LATER},
        ],
    )
    _submit(client, alice, ALICE)
    _submit(client, bob, BOB)
    html = browser("alice").get("/c/reg/leaderboard").text
    tabs = html.split('class="phase-tabs"')[1].split("</nav>")[0]
    assert "Development" in tabs and "Final" in tabs
    assert re.search(r'href="/c/reg/leaderboard\?phase=dev"[^>]*aria-current="page"', tabs)
    assert "phase-open" in tabs and "phase-upcoming" in tabs
    assert NEXT_WEEK[:10] in tabs and LATER[:10] in tabs and "UTC" in tabs  # dates, in UTC
    # One column per column, each header a link ranking by it; ranked by the first.
    assert '<a href="?phase=dev&amp;board=public" title="Rank by RMSE">RMSE</a>' in html
    assert 'href="?phase=dev&amp;board=public&amp;sort=mae"' in html
    rows = _tbody(html)
    assert rows.index("alice") < rows.index("bob")
    assert "0.26163" in rows  # RMSE at the competition's 5 decimals
    assert "0.18" in rows or "0.19" in rows  # MAE at its precision, 2 digits
    assert "0.185" not in rows
    overview = browser().get("/c/reg").text
    phases = overview.split('class="table phases"')[1].split("</table>")[0]
    assert "Development" in phases and "phase-open" in phases and "phase-upcoming" in phases


def test_a_header_sorts_by_its_column_and_the_page_says_so(client, people, browser):
    host, alice, bob = people
    _competition(client, host, phases=[{"name": "dev", "start": PAST}])
    _submit(client, alice, ALICE)
    _submit(client, bob, BOB)
    html = browser().get("/c/reg/leaderboard?sort=mae").text
    assert re.search(r'aria-sort="ascending"><a href="\?board=public&amp;sort=mae"', html)
    assert "Ranked by MAE" in html
    unknown = browser().get("/c/reg/leaderboard?sort=nope")
    assert unknown.status_code == 422 and "cannot sort by" in unknown.text


def test_a_hidden_column_is_shown_to_hosts_only(client, people, browser):
    host, alice, _bob = people
    columns = [COLUMNS[0], {**COLUMNS[1], "hidden": True}]
    _competition(client, host, phases=[{"name": "dev", "start": PAST}], columns=columns)
    _submit(client, alice, ALICE)
    for viewer in (browser(), browser("alice"), browser("bob")):
        html = viewer.get("/c/reg/leaderboard").text
        assert "MAE" not in html and "0.18" not in _tbody(html)
        assert viewer.get("/c/reg/leaderboard?sort=mae").status_code == 422
    hosted = browser("host").get("/c/reg/leaderboard").text
    rows = _tbody(hosted)
    assert "MAE" in hosted and "hidden</span>" in hosted
    # Hosts see every digit of a column without a precision, a column's precision whoever reads.
    assert "0.26163" in rows and ("0.18<" in rows or "0.19<" in rows) and "0.185" not in rows


# -- blind and hidden boards ------------------------------------------------------------------


def _blind(client, host, alice) -> int:
    _competition(
        client, host, phases=[{"name": "final", "start": PAST, "end": LATER, "board": "blind"}]
    )
    return _submit(client, alice, ALICE)


def test_a_blind_board_says_when_scores_appear_and_shows_nothing_of_a_score(
    client, people, browser
):
    host, alice, bob = people
    alices = _blind(client, host, alice)
    _submit(client, bob, BOB)
    for viewer in (browser(), browser("alice"), browser("bob")):
        for board in ("public", "private"):
            page = viewer.get(f"/c/reg/leaderboard?board={board}")
            assert page.status_code == 200
            assert "blind: its scores appear when the phase ends" in page.text
            assert LATER[:10] in page.text  # when: the phase's end
            assert "<table" not in page.text and "<svg" not in page.text  # no rows, no chart
            _no_score(page.text)
        _no_score(viewer.get("/c/reg").text)
    # Alice's own pages say it was scored, and nothing of its score.
    alice_web = browser("alice")
    mine = alice_web.get("/c/reg/submissions").text
    assert 'badge scored">scored<' in mine and "This phase is blind" in mine
    _no_score(mine)
    _no_score(alice_web.get("/c/reg/submissions.json").text)
    # The submission's own page, asked for directly: scored, and nothing of its score.
    detail = alice_web.get(f"/c/reg/submissions/{alices}")
    assert detail.status_code == 200 and "scored" in detail.text
    _no_score(detail.text)
    assert browser("bob").get(f"/c/reg/submissions/{alices}").status_code == 404
    # Hosts see the rows.
    hosted = browser("host").get("/c/reg/leaderboard").text
    assert "alice" in _tbody(hosted) and "0.26163" in hosted and "hosts only" in hosted


def test_a_blind_board_opens_when_its_phase_ends(client, people, browser, session_factory):
    host, alice, _bob = people
    _blind(client, host, alice)
    _set_phase(session_factory, "final", end=datetime.now(UTC) - timedelta(seconds=1))
    html = browser("bob").get("/c/reg/leaderboard").text
    assert "alice" in _tbody(html) and "0.26163" in html
    mine = browser("alice").get("/c/reg/submissions").text
    assert "0.26163" in mine and "0.14142" in mine  # public and, revealed, private


def test_a_hidden_board_is_for_hosts_and_each_team_sees_its_own_scores(client, people, browser):
    host, alice, bob = people
    _competition(client, host, phases=[{"name": "dev", "start": PAST, "board": "hidden"}])
    _submit(client, alice, ALICE)
    for viewer in (browser(), browser("alice"), browser("bob")):
        html = viewer.get("/c/reg/leaderboard").text
        assert "board is for its hosts only" in html and "My submissions" in html
        _no_score(html)
    assert "0.26163" in browser("alice").get("/c/reg/submissions").text
    # Another team sees nothing of alice's on its own page.
    theirs = browser("bob").get("/c/reg/submissions").text
    assert "No submissions yet" in theirs
    _no_score(theirs)
    assert browser("bob").get("/c/reg/submissions.json").json()["submissions"] == []
    assert "0.26163" in _tbody(browser("host").get("/c/reg/leaderboard").text)


# -- My submissions ---------------------------------------------------------------------------


def test_my_submissions_shows_each_column_and_the_phase(client, people, browser):
    host, alice, _bob = people
    _competition(client, host, phases=[{"name": "dev", "start": PAST}])
    _submit(client, alice, ALICE)
    html = browser("alice").get("/c/reg/submissions").text
    head = html.split('id="submissions"')[1].split("</thead>")[0]
    assert ">RMSE<" in head and ">MAE<" in head
    assert "&#34;key&#34;: &#34;rmse&#34;" in head or "&quot;key&quot;: &quot;rmse&quot;" in head
    body = _tbody(html.split('id="submissions"')[1])
    assert "0.26163" in body and ("0.18" in body or "0.19" in body)
    assert browser().get("/c/reg/submissions", follow_redirects=False).status_code == 303


def test_several_open_phases_give_the_upload_form_a_phase_choice_and_their_own_quota(
    client, people, browser
):
    host, alice, _bob = people
    _competition(
        client,
        host,
        phases=[
            {"name": "dev", "start": PAST, "daily_submission_limit": 3},
            {"name": "test", "start": PAST, "daily_submission_limit": 7},
            {"name": "later", "start": NEXT_WEEK},
        ],
    )
    web = browser("alice")
    html = web.get("/c/reg/submissions?phase=test").text
    choice = html.split('<select name="phase"')[1].split("</select>")[0]
    assert 'value="dev"' in choice and 'value="test" selected' in choice
    assert 'value="later"' not in choice  # not open: not offered
    assert "of 7 left today" in html  # the test phase's quota
    response = web.post(
        "/c/reg/submissions",
        page="/c/reg/submissions?phase=test",
        data={"phase": "test", "description": "into test"},
        files={"file": ("sub.csv", ALICE, "text/csv")},
    )
    assert response.status_code == 303, response.text
    listed = client.get(f"{API}/competitions/reg/submissions", headers=alice.headers).json()
    assert [s["phase"] for s in listed] == ["test"]
    assert "into test" in web.get("/c/reg/submissions?phase=test").text
    assert "into test" not in web.get("/c/reg/submissions?phase=dev").text
    assert ">6</strong> of 7" in web.get("/c/reg/submissions?phase=test").text
    assert web.get("/c/reg/submissions?phase=nope").status_code == 404


# -- honest boards: compare and shake-up -------------------------------------------------------


def test_compare_and_shakeup_refuse_a_blind_phase_to_participants(client, people):
    host, alice, _bob = people
    first = _blind(client, host, alice)
    second = _submit(client, alice, ALICE)
    compare = client.get(
        f"{API}/competitions/reg/compare", params={"a": first, "b": second}, headers=alice.headers
    )
    assert compare.status_code == 403 and compare.json()["code"] == "board_blind"
    shake = client.get(f"{API}/competitions/reg/shakeup", headers=alice.headers)
    assert shake.status_code == 403 and shake.json()["code"] == "board_blind"
    # Hosts are not refused for the board's rule.
    assert client.get(f"{API}/competitions/reg/shakeup", headers=host.headers).status_code == 200


def test_compare_and_shakeup_refuse_a_hidden_phase_to_participants(client, people, session_factory):
    host, alice, bob = people
    _competition(client, host, phases=[{"name": "dev", "start": PAST, "board": "hidden"}])
    first, second = _submit(client, alice, ALICE), _submit(client, alice, BOB)
    _set_phase(session_factory, "dev", end=datetime.now(UTC) - timedelta(seconds=1))
    compare = client.get(
        f"{API}/competitions/reg/compare", params={"a": first, "b": second}, headers=alice.headers
    )
    assert compare.status_code == 403 and compare.json()["code"] == "board_hidden"
    for caller in (alice, bob):
        shake = client.get(f"{API}/competitions/reg/shakeup", headers=caller.headers)
        assert shake.status_code == 403 and shake.json()["code"] == "board_hidden"
    # Another team cannot name alice's submissions at all.
    theirs = client.get(
        f"{API}/competitions/reg/compare", params={"a": first, "b": second}, headers=bob.headers
    )
    assert theirs.status_code == 404


def test_compare_takes_two_submissions_of_one_phase(client, people, session_factory):
    host, alice, _bob = people
    _competition(
        client,
        host,
        phases=[{"name": "dev", "start": PAST, "end": NEXT_WEEK}, {"name": "final", "end": LATER}],
    )
    first = _submit(client, alice, ALICE)
    switch = datetime.now(UTC) - timedelta(minutes=1)
    _set_phase(session_factory, "dev", end=switch)
    _set_phase(session_factory, "final", start=switch)
    second = _submit(client, alice, BOB)
    for caller in (host, alice):
        compare = client.get(
            f"{API}/competitions/reg/compare",
            params={"a": first, "b": second},
            headers=caller.headers,
        )
        assert compare.status_code == 422 and "two phases" in compare.json()["detail"]


def test_the_upload_form_asks_the_phases_entry_fields_and_the_board_shows_them_escaped(
    client, people, browser
):
    host, alice, _bob = people
    fields = [
        {"key": "method_name", "required": True, "on_board": True},
        {"key": "project_url"},
        {"key": "external_data", "type": "boolean"},
    ]
    _competition(client, host, phases=[{"name": "dev", "start": PAST, "entry_fields": fields}])
    web = browser("alice")
    form = web.get("/c/reg/submissions").text.split('id="upload"')[1].split("</form>")[0]
    assert 'name="details.method_name"' in form and "required" in form
    assert 'type="url" name="details.project_url"' in form
    assert 'type="checkbox" name="details.external_data"' in form

    def send(**details: str):  # type: ignore[no-untyped-def]
        return web.post(
            "/c/reg/submissions",
            page="/c/reg/submissions",
            data={f"details.{k}": v for k, v in details.items()},
            files={"file": ("sub.csv", ALICE, "text/csv")},
        )

    refused = send(project_url="javascript:alert(1)", method_name="m")
    assert refused.status_code == 303
    assert "details.project_url" in web.get(refused.headers["location"]).text
    assert send(method_name="").status_code == 303  # refused: required
    accepted = send(method_name="<b>boost</b>", external_data="true")
    assert accepted.status_code == 303
    listed = client.get(f"{API}/competitions/reg/submissions", headers=alice.headers).json()
    scored = [s for s in listed if s["status"] == "scored"]
    assert [s["details"] for s in scored] == [
        {"method_name": "<b>boost</b>", "external_data": True}
    ]
    board = browser("bob").get("/c/reg/leaderboard").text
    assert ">Method name</th>" in board
    assert "&lt;b&gt;boost&lt;/b&gt;" in _tbody(board) and "<b>boost" not in board
