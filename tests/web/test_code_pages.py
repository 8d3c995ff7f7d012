"""A code submission on the pages: its status while it runs, its failure in Kaggle's words, and
its run's log for its team and the hosts only.

``run_code`` is replaced by a stand-in (the jail has its own tests in tests/coderun/), so the
test can look at the pages while "the code runs"."""

from collections.abc import Iterator
from typing import Any

import pytest

from app.coderun.outcome import CodeRunOutcome, Provenance, RunLog
from app.jobs import code_run
from app.jobs.score import score_submission
from app.main import create_app
from tests.asgi_client import TestClient
from tests.helpers import API, ParkedQueue
from tests.jobs.test_code_turns import _code_competition, _submit_code
from tests.web.conftest import WebClient

LOG_LINE = "alice's model: epoch 3 of 10"


@pytest.fixture
def parked(settings, session_factory) -> Iterator[TestClient]:
    """The site with a queue that never runs jobs: the test runs each job itself."""
    with TestClient(
        create_app(settings, session_factory=session_factory, scoring_queue=ParkedQueue())
    ) as client:
        yield client


def _browser(client: TestClient, name: str | None = None) -> WebClient:
    web = WebClient(TestClient(client.app, base_url="http://testserver"))
    if name is not None:
        assert web.sign_in(name).status_code == 303
    return web


def _timed_out(seen: dict[str, Any], look: Any) -> Any:
    def run(**arguments: Any) -> CodeRunOutcome:
        seen["while running"] = look()
        return CodeRunOutcome(
            output=None,
            failure="timeout",
            message="the run passed its wall limit of 60 s and was stopped",
            log=RunLog(f"{LOG_LINE}\n".encode(), b"", len(LOG_LINE) + 1),
            provenance=Provenance("a" * 64, "b" * 64, "c" * 64),
            limits=arguments["limits"],
            seconds=60.0,
        )

    return run


def test_the_submission_page_shows_the_run_its_failure_and_its_log_to_team_and_hosts(
    parked, settings, session_factory, person, monkeypatch
):
    host, alice, bob = person("host", organiser=True), person("alice"), person("bob")
    _code_competition(parked, host.headers)
    submission_id = _submit_code(parked, alice.headers)
    page = f"/c/code/submissions/{submission_id}"
    alices, hosts, bobs = (
        _browser(parked, "alice"),
        _browser(parked, "host"),
        _browser(parked, "bob"),
    )
    seen: dict[str, Any] = {}
    monkeypatch.setattr(code_run, "run_code", _timed_out(seen, lambda: alices.get(page).text))
    score_submission(session_factory, submission_id, settings)

    assert 'class="badge running"' in seen["while running"]
    mine = alices.get(page)
    assert mine.status_code == 200
    assert "Notebook Timeout" in mine.text and "(timeout)" in mine.text
    assert LOG_LINE.replace("'", "&#39;") in mine.text
    assert "a" * 64 in mine.text  # the code's sha256
    # The list names the failure in Kaggle's words and links to the run.
    listing = alices.get("/c/code/submissions").text
    assert "Notebook Timeout (timeout)" in listing and f'href="{page}"' in listing
    hosts_view = hosts.get(page)
    assert hosts_view.status_code == 200 and LOG_LINE.replace("'", "&#39;") in hosts_view.text
    # Another team, and a visitor signed in nowhere: nothing of it.
    theirs = bobs.get(page)
    assert theirs.status_code == 404 and "epoch 3" not in theirs.text
    assert "epoch 3" not in _browser(parked).get(page, follow_redirects=True).text
    assert "epoch 3" not in bobs.get("/c/code/submissions").text
    # The API agrees.
    log = parked.get(f"{API}/submissions/{submission_id}/log", headers=bob.headers)
    assert log.status_code == 404


def test_a_submission_of_another_competition_is_not_found_under_this_one(
    parked, settings, session_factory, person, monkeypatch
):
    host, alice = person("host", organiser=True), person("alice")
    _code_competition(parked, host.headers)
    _code_competition(parked, host.headers, slug="other")
    submission_id = _submit_code(parked, alice.headers, slug="other")
    alices = _browser(parked, "alice")
    assert alices.get(f"/c/other/submissions/{submission_id}").status_code == 200
    assert alices.get(f"/c/code/submissions/{submission_id}").status_code == 404


def test_a_code_phase_asks_for_code_in_the_upload_form(parked, person):
    host = person("host", organiser=True)
    person("alice")
    _code_competition(parked, host.headers)
    form = _browser(parked, "alice").get("/c/code/submissions").text
    assert 'accept=".py,.ipynb,.zip"' in form and "/kaggle/working/submission.csv" in form


def test_the_evaluation_page_shows_the_layout_the_limits_and_the_runtime(parked, person):
    host = person("host", organiser=True)
    _code_competition(parked, host.headers)
    page = _browser(parked).get("/c/code/evaluation")
    assert page.status_code == 200
    runtime = parked.get(f"{API}/runtime", headers=host.headers).json()
    assert f"Python {runtime['python']}" in page.text
    assert f"numpy {runtime['packages']['numpy']}" in page.text
    assert "/kaggle/input/code/" in page.text and "600 s" in page.text
    # A predictions competition says nothing of code runs.
    parked.post(
        f"{API}/competitions",
        json={"slug": "plain", "title": "Plain", "metric": {"name": "rmse"}},
        headers=host.headers,
    )
    assert "Code runs" not in _browser(parked).get("/c/plain/evaluation").text


def test_a_host_runs_a_submission_again_from_its_page_and_nobody_else_may(
    parked, settings, session_factory, person, monkeypatch
):
    host, alice = person("host", organiser=True), person("alice")
    _code_competition(parked, host.headers)
    submission_id = _submit_code(parked, alice.headers)
    monkeypatch.setattr(code_run, "run_code", _timed_out({}, lambda: None))
    score_submission(session_factory, submission_id, settings)
    hosts = _browser(parked, "host")
    page = f"/c/code/host/submissions/{submission_id}"
    assert f'action="{page}/rerun"' in hosts.get(page).text
    # Alice's own submission, alice's browser: the host's form is not hers to post.
    refused = _browser(parked, "alice").post(f"{page}/rerun", page="/c/code/submissions")
    assert refused.status_code in (403, 404)
    view = parked.get(f"{API}/submissions/{submission_id}", headers=alice.headers).json()
    assert view["status"] == "failed"
    done = hosts.post(f"{page}/rerun", page=page)
    assert done.status_code == 303
    view = parked.get(f"{API}/submissions/{submission_id}", headers=alice.headers).json()
    assert view["status"] == "queued" and view["failure"] is None  # the parked queue holds it
