"""The New competition page's steps after the first: columns from the metric catalogue, phases,
each phase's answer key and the data files. Each step saves the draft, shows the API's own
messages beside the field they name with what was typed kept, and is its hosts' alone."""

import html
from typing import Any

import pytest

from tests.helpers import API, create_competition, csv_bytes

REG_KEY = csv_bytes(
    ["id", "y", "Usage"],
    ["a", 1.0, "Public"],
    ["b", 2.0, "Public"],
    ["c", 3.0, "Private"],
    ["d", 4.0, "Private"],
)
COLUMNS = {
    "col-0-key": "rmse",
    "col-0-title": "RMSE",
    "col-0-kind": "rmse",
    "col-1-key": "mae",
    "col-1-kind": "mae",
    "col-1-precision": "3",
    "col-2-key": "both",
    "col-2-kind": "computed",
    "col-2-op": "mean",
    "col-2-of": "rmse, mae",
}
PHASES = {
    "ph-0-name": "dev",
    "ph-0-title": "Development",
    "ph-0-start": "2030-01-01",
    "ph-0-end": "2030-01-31",
    "ph-0-daily_submission_limit": "10",
    "ph-0-final_selection_limit": "2",
    "ph-0-board": "public",
    "ph-0-counts": "best",
    "ph-1-name": "final",
    "ph-1-start": "2030-02-01",
    "ph-1-end": "2030-02-14T18:00",
    "ph-1-daily_submission_limit": "2",
    "ph-1-total_submission_limit": "5",
    "ph-1-final_selection_limit": "1",
    "ph-1-board": "blind",
    "ph-1-counts": "chosen",
}


def _error(page: str, name: str) -> str:
    assert f'id="{name}-error"' in page, page
    return page.split(f'id="{name}-error"')[1].split("</span>")[0]


def _flash(page: str) -> str:
    return page.split('class="flash ')[1].split("</p>")[0]


def _draft(person, browser, title: str = "Two phases") -> Any:  # type: ignore[no-untyped-def]
    ada = person("ada", organiser=True)
    web = browser("ada")
    made = web.post("/host/new", page="/host/new", data={"title": title, "description": "Task"})
    assert made.status_code == 303, made.text
    web.ada = ada
    return web


def test_the_steps_build_a_two_phase_three_column_draft_and_publish_it(client, person, browser):
    web = _draft(person, browser)
    slug = "two-phases"
    columns_page = f"/c/{slug}/host/new/columns"
    assert web.get(f"/c/{slug}").status_code == 200
    first = web.get(columns_page).text
    assert 'name="col-0-kind"' in first and "Area under the ROC curve" in first
    # Adding a row shows the form again with what was typed, nothing saved yet.
    added = web.post(
        columns_page,
        page=columns_page,
        data={"col-0-key": "rmse", "col-0-kind": "rmse", "action": "add_computed"},
    )
    assert added.status_code == 200
    assert 'value="rmse"' in added.text and 'name="col-1-of"' in added.text
    saved = web.post(columns_page, page=columns_page, data={**COLUMNS, "action": "save"})
    assert saved.status_code == 303, saved.text
    assert saved.headers["location"] == f"/c/{slug}/host/new/phases"
    # Left and resumed: the step shows what was saved.
    again = web.get(columns_page).text
    assert 'value="both"' in again and 'value="rmse, mae"' in again

    phases_page = f"/c/{slug}/host/new/phases"
    saved = web.post(phases_page, page=phases_page, data={**PHASES, "action": "save"})
    assert saved.status_code == 303, saved.text
    data_page = web.get(saved.headers["location"]).text
    # The stored instants are echoed exactly, in UTC.
    assert "dev 2030-01-01T00:00:00Z to 2030-01-31T23:59:59Z" in _flash(data_page)
    assert "final 2030-02-01T00:00:00Z to 2030-02-14T18:00:00Z" in _flash(data_page)
    resumed = web.get(phases_page).text
    assert 'value="2030-02-14T18:00:00Z"' in resumed

    for phase in ("dev", "final"):
        sent = web.post(
            f"/c/{slug}/host/new/data/key",
            page=f"/c/{slug}/host/new/data",
            data={"phase": phase},
            files={"file": ("key.csv", REG_KEY, "text/csv")},
        )
        assert sent.status_code == 303, sent.text
        assert f"Phase {phase}: answer key version 1 stored" in _flash(
            web.get(sent.headers["location"]).text
        )
    sent = web.post(
        f"/c/{slug}/host/new/data/file",
        page=f"/c/{slug}/host/new/data",
        files={"file": ("train.csv", b"id,x\na,1\n", "text/csv")},
    )
    assert sent.status_code == 303
    assert "train.csv" in web.get(f"/c/{slug}/host/new/data").text

    launch = web.get(f"/c/{slug}/host/launch").text
    assert "phases.final.sample_scores.both" in launch and "missing" not in launch
    assert web.post(f"/c/{slug}/host/publish", page=f"/c/{slug}/host/launch").status_code == 303
    assert "is published" in _flash(web.get(f"/c/{slug}/host/launch").text)

    body = client.get(f"{API}/competitions/{slug}", headers=web.ada.headers).json()
    assert body["status"] == "published"
    assert [c["key"] for c in body["leaderboard_columns"]] == ["rmse", "mae", "both"]
    assert body["leaderboard_columns"][1]["precision"] == 3
    phases = {p["name"]: p for p in body["phases"]}
    assert phases["final"]["board"] == "blind" and phases["final"]["total_submission_limit"] == 5
    assert phases["dev"]["counts"] == "best" and phases["dev"]["title"] == "Development"


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"col-0-key": "bad key!", "col-0-kind": "rmse"}, "col-0-key", "no spaces"),
        (
            {"col-0-key": "k", "col-0-kind": "map_at_k", "col-0-param-k": "many"},
            "col-0",
            "k",
        ),
        (
            {"col-0-key": "a", "col-0-kind": "rmse", "col-1-key": "c", "col-1-kind": "computed"}
            | {"col-1-op": "mean", "col-1-of": "nowhere"},
            "col-1-computed",
            "nowhere",
        ),
        (
            {"col-0-key": "a", "col-0-kind": "rmse", "col-1-key": "b", "col-1-kind": "accuracy"},
            "col-1",
            "",
        ),
    ],
)
def test_a_refused_column_is_named_beside_its_field_and_what_was_typed_is_kept(
    person, browser, data, field, message
):
    web = _draft(person, browser, "Columns")
    page = "/c/columns/host/new/columns"
    refused = web.post(page, page=page, data={**data, "action": "save"})
    assert refused.status_code == 422
    text = refused.text
    found = [k for k in (field, f"{field}-metric", f"{field}-key") if f'id="{k}-error"' in text]
    assert found, text
    assert message in _error(text, found[0])
    for value in data.values():
        assert f'value="{value}"' in text or f">{value}<" in text


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"ph-0-name": "Main Phase"}, "ph-0-name", "a phase name is up to 63 lowercase letters"),
        ({"ph-0-name": "a", "ph-0-end": "2030-02-30"}, "ph-0-end", "date"),
        (
            {"ph-0-name": "a", "ph-0-start": "2030-02-01", "ph-0-end": "2030-01-01"},
            "ph-0",
            "end must come after start",
        ),
        (
            # 0 is a phase that takes no upload of its own (CodaLab's reading); below it, refused.
            {"ph-0-name": "a", "ph-0-daily_submission_limit": "-1"},
            "ph-0-daily_submission_limit",
            "0",
        ),
        ({"ph-0-name": "a", "ph-0-board": "secret"}, "ph-0-board", "public"),
    ],
)
def test_a_refused_phase_is_named_beside_its_field_and_what_was_typed_is_kept(
    person, browser, data, field, message
):
    web = _draft(person, browser, "Phases")
    page = "/c/phases/host/new/phases"
    refused = web.post(page, page=page, data={**data, "action": "save"})
    assert refused.status_code == 422
    assert message in _error(refused.text, field)
    for name, value in data.items():
        if name.endswith(("board", "counts")):
            continue
        assert f'value="{value}"' in refused.text


def test_adding_and_removing_phases_keeps_the_rows_typed(person, browser):
    web = _draft(person, browser, "Rows")
    page = "/c/rows/host/new/phases"
    added = web.post(page, page=page, data={**PHASES, "action": "add_phase"})
    assert added.status_code == 200
    assert 'name="ph-2-name" value="phase-3"' in added.text
    assert 'name="ph-2-start" value=""' in added.text  # it opens when the one before ends
    removed = web.post(page, page=page, data={**PHASES, "action": "remove-0"})
    assert 'value="dev"' not in removed.text and 'name="ph-0-name" value="final"' in removed.text


def test_a_phase_with_a_key_cannot_be_removed(client, person, browser):
    web = _draft(person, browser, "Keep")
    columns = "/c/keep/host/new/columns"
    assert web.post(columns, page=columns, data={**COLUMNS, "action": "save"}).status_code == 303
    page = "/c/keep/host/new/phases"
    assert web.post(page, page=page, data={**PHASES, "action": "save"}).status_code == 303
    sent = web.post(
        "/c/keep/host/new/data/key",
        page="/c/keep/host/new/data",
        data={"phase": "dev"},
        files={"file": ("key.csv", REG_KEY, "text/csv")},
    )
    assert "answer key version 1 stored" in _flash(web.get(sent.headers["location"]).text)
    only_final = {k.replace("ph-1-", "ph-0-"): v for k, v in PHASES.items() if k.startswith("ph-1")}
    refused = web.post(page, page=page, data={**only_final, "action": "save"})
    assert refused.status_code == 422
    assert "phase 'dev' has an answer key" in html.unescape(refused.text)
    # Changing the columns to ones that read the file differently is refused too: the key was
    # read for a regression metric.
    refused = web.post(
        columns, page=columns, data={"col-0-key": "acc", "col-0-kind": "accuracy", "action": "save"}
    )
    assert refused.status_code == 422 and "reads files differently" in refused.text


def test_a_published_competition_is_not_revised_by_the_steps(client, person, browser):
    ada = person("ada", organiser=True)
    create_competition(client, ada.headers, "live", metric={"name": "rmse"})
    web = browser("ada")
    page = "/c/live/host/new/phases"
    assert web.get(page).status_code == 200
    refused = web.post(page, page=page, data={"ph-0-name": "main", "action": "save"})
    assert refused.status_code == 422
    assert "only a draft's columns and phases" in html.unescape(refused.text)


STEP_PAGES = ("/host/new/columns", "/host/new/phases", "/host/new/data")
STEP_POSTS = (
    ("/host/new/columns", {"col-0-key": "x", "col-0-kind": "rmse", "action": "save"}),
    ("/host/new/phases", {"ph-0-name": "x", "action": "save"}),
    ("/host/new/data/key", {"phase": "main"}),
    ("/host/new/data/file", {}),
)


@pytest.mark.parametrize("status", ["draft", "published"])
def test_the_steps_are_refused_to_a_participant_and_another_competitions_host(
    client, person, browser, status
):
    ada = person("ada", organiser=True)
    olga = person("olga", organiser=True)
    person("alice")
    create_competition(client, ada.headers, "mine", status=status, metric={"name": "rmse"})
    create_competition(client, olga.headers, "olgas", metric={"name": "rmse"})
    # A draft is not there for them (404); a published competition's host pages are 403.
    expected = 404 if status == "draft" else 403
    for who in ("alice", "olga"):
        web = browser(who)
        for path in STEP_PAGES:
            assert web.get(f"/c/mine{path}").status_code == expected, (who, path)
        for path, data in STEP_POSTS:
            files = {"file": ("f.csv", REG_KEY, "text/csv")} if "data/" in path else None
            posted = web.post(f"/c/mine{path}", page="/", data=data, files=files)
            # A refused form goes back with the refusal (303), as every form does; that it
            # changed nothing is checked below.
            assert posted.status_code in (expected, 303), (who, path, posted.status_code)
    body = client.get(f"{API}/competitions/mine", headers=ada.headers).json()
    assert [c["key"] for c in body["leaderboard_columns"]] == ["rmse"]
    assert [p["name"] for p in body["phases"]] == ["main"]
    assert body["has_answer_key"] is False
    files = client.get(f"{API}/competitions/mine/files", headers=ada.headers)
    assert "f.csv" not in files.text
