"""The hosts' "Reproduce the winners" button (issue 43) on the Submissions tab of a code
competition, on the real jail: the report fills in per team; a participant cannot press it."""

import pytest

from app.jobs.reproduce import run_due
from tests.coderun.conftest import jail as jail  # the jail's one self-test, as tests/coderun's
from tests.coderun.test_code_scoring import SCRIPT, _competition, _submit


@pytest.mark.usefixtures("jail")
def test_the_host_reproduces_the_winners_from_the_submissions_tab(
    client, browser, person, session_factory, settings
):
    host, alice = person("host", organiser=True), person("alice")
    _competition(client, host, "code", "code")
    made = _submit(client, alice, "code", "main.py", SCRIPT)["id"]
    web = browser("host")
    page = "/c/code/host/submissions"
    assert "Reproduce the winners" in web.get(page).text
    pressed = web.post("/c/code/host/reproduce", page=page, data={"top": "1"})
    assert pressed.status_code == 303, pressed.text
    assert '<span class="badge queued">pending</span>' in web.get(page).text
    assert run_due(session_factory, settings) == 1
    shown = web.get(page).text
    assert f'/c/code/host/submissions/{made}">{made}</a>' in shown
    assert '<span class="badge scored">equal</span>' in shown
    # A participant: not a host of it, so no such page and no such action.
    theirs = browser("alice")
    assert theirs.post("/c/code/host/reproduce", page="/", data={"top": "1"}).status_code in (
        403,
        404,
    )
    assert run_due(session_factory, settings) == 0


def test_a_prediction_competition_shows_no_button(client, browser, person):
    from tests.helpers import ready_competition

    host = person("host", organiser=True)
    ready_competition(client, host.headers)
    assert "Reproduce the winners" not in browser("host").get("/c/churn/host/submissions").text
