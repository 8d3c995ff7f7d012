"""The New competition page's Phases step beyond the window and the rules: a phase's own
leaderboard columns, its entry fields, what participants send and a code phase's limits, set
on the page (no JavaScript: buttons add and remove rows) and then seen through the API; each
refusal beside the field it names with what was typed kept; and the step is its hosts' alone."""

import html
from html.parser import HTMLParser
from typing import Any

import pytest

from tests.bundles.builders import codabench_files, make_zip
from tests.helpers import API, create_competition
from tests.web.test_wizard import COLUMNS, PHASES, _draft, _error

SLUG = "two-phases"
PAGE = f"/c/{SLUG}/host/new/phases"
# The final phase ranks by its own columns (MAE first, RMSE to two digits) and asks for a
# method name and whether external data was used (shown on its board).
OWN = {
    "ph-1-col-0-key": "mae",
    "ph-1-col-0-kind": "mae",
    "ph-1-col-1-key": "rmse",
    "ph-1-col-1-kind": "rmse",
    "ph-1-col-1-precision": "2",
    "ph-1-field-0-key": "method_name",
    "ph-1-field-0-type": "text",
    "ph-1-field-0-required": "1",
    "ph-1-field-1-key": "external_data",
    "ph-1-field-1-title": "External data?",
    "ph-1-field-1-type": "choice",
    "ph-1-field-1-options": "none\nsome, public\nprivate",
    "ph-1-field-1-on_board": "1",
}
# The development phase runs participants' code within these limits.
CODE = {
    "ph-0-submission_kind": "code",
    "ph-0-wall_seconds": "120",
    "ph-0-memory_mb": "512",
}


def _with_columns(person, browser) -> Any:  # type: ignore[no-untyped-def]
    web = _draft(person, browser)
    columns = f"/c/{SLUG}/host/new/columns"
    assert web.post(columns, page=columns, data={**COLUMNS, "action": "save"}).status_code == 303
    return web


def _phases(client, web) -> dict[str, dict[str, Any]]:  # type: ignore[no-untyped-def]
    body = client.get(f"{API}/competitions/{SLUG}", headers=web.ada.headers).json()
    return {p["name"]: p for p in body["phases"]}


def test_a_phases_own_columns_entry_fields_and_code_limits_are_set_on_the_page(
    client, person, browser
):
    web = _with_columns(person, browser)
    # "Give this phase its own columns" starts from the competition's, typed rows kept.
    own = web.post(PAGE, page=PAGE, data={**PHASES, "action": "ph-1-col:own"})
    assert own.status_code == 200
    assert 'name="ph-1-col-0-key" value="rmse"' in own.text
    assert 'name="ph-1-col-2-of" value="rmse, mae"' in own.text
    assert 'name="ph-0-col-0-key"' not in own.text  # the other phase keeps the competition's
    assert 'name="ph-0-name" value="dev"' in own.text
    standard = web.post(PAGE, page=PAGE, data={**PHASES, "action": "ph-1-field:standard"})
    names = ("method_name", "method_description", "project_url", "publication_url")
    for i, name in enumerate(names):
        assert f'name="ph-1-field-{i}-key" value="{name}"' in standard.text
    added = web.post(PAGE, page=PAGE, data={**PHASES, **OWN, "action": "ph-1-col:add_computed"})
    assert 'name="ph-1-col-2-of" value="mae, rmse"' in added.text
    removed = web.post(PAGE, page=PAGE, data={**PHASES, **OWN, "action": "ph-1-field:remove-0"})
    assert 'name="ph-1-field-0-key" value="external_data"' in removed.text
    assert 'value="method_name"' not in removed.text
    # Choosing code shows its limits (the defaults and the server's maxima beside them).
    shown = web.post(PAGE, page=PAGE, data={**PHASES, **CODE, "action": "refresh"})
    assert 'name="ph-0-wall_seconds" step="any" value="120"' in shown.text

    saved = web.post(PAGE, page=PAGE, data={**PHASES, **OWN, **CODE, "action": "save"})
    assert saved.status_code == 303, saved.text
    phases = _phases(client, web)
    final, dev = phases["final"], phases["dev"]
    assert [c["key"] for c in final["columns"]] == ["mae", "rmse"]
    assert final["columns"][1]["precision"] == 2
    assert final["entry_fields"] == [
        {"key": "method_name", "type": "text", "required": True, "on_board": False},
        {
            "key": "external_data",
            "title": "External data?",
            "type": "choice",
            "options": ["none", "some, public", "private"],
            "required": False,
            "on_board": True,
        },
    ]
    assert dev["columns"] is None and dev["entry_fields"] == []
    assert dev["submission_kind"] == "code" and final["submission_kind"] == "predictions"
    assert dev["code_limits"]["wall_seconds"] == 120 and dev["code_limits"]["memory_mb"] == 512
    # Left and resumed: the step shows what was saved.
    again = web.get(PAGE).text
    assert 'name="ph-1-col-1-precision" min="0" max="15" value="2"' in again
    assert "none\nsome, public\nprivate</textarea>" in html.unescape(again)
    assert 'name="ph-0-memory_mb" step="any" value="512"' in again
    # Posted back as shown, the page changes nothing.
    as_shown = web.post(PAGE, page=PAGE, data={**_shown(again, "phases"), "action": "save"})
    assert as_shown.status_code == 303 and _phases(client, web) == phases
    audit = client.get(f"{API}/competitions/{SLUG}/audit", headers=web.ada.headers).json()
    change = [e for e in audit if e["action"] == "phases_change"][-1]
    assert change["after"]["phases"][1]["entry_fields"][1]["key"] == "external_data"

    # Using the competition's columns again and asking nothing: saved as the page shows it.
    plain = {**PHASES, "ph-0-submission_kind": "predictions", "action": "save"}
    assert web.post(PAGE, page=PAGE, data=plain).status_code == 303
    phases = _phases(client, web)
    assert phases["final"]["columns"] is None and phases["final"]["entry_fields"] == []
    assert phases["dev"]["submission_kind"] == "predictions"


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"ph-0-col-0-key": "bad key!", "ph-0-col-0-kind": "rmse"}, "ph-0-col-0-key", "no spaces"),
        (
            # The competition ranks by RMSE (lower is better); R² ranks the other way.
            {"ph-0-col-0-key": "r2", "ph-0-col-0-kind": "r2"},
            "ph-0-col-0",
            "ranks the same way as its competition",
        ),
        (
            {"ph-0-col-0-key": "acc", "ph-0-col-0-kind": "accuracy"},
            "ph-0-col-0",
            "",
        ),
        (
            {"ph-0-col-0-key": "a", "ph-0-col-0-kind": "rmse", "ph-0-col-1-key": "m"}
            | {"ph-0-col-1-kind": "computed", "ph-0-col-1-op": "mean", "ph-0-col-1-of": "zzz"},
            "ph-0-col-1-computed",
            "zzz",
        ),
        ({"ph-0-field-0-key": "pick", "ph-0-field-0-type": "choice"}, "ph-0-field-0", "options"),
        ({"ph-0-field-0-key": "a b", "ph-0-field-0-type": "text"}, "ph-0-field-0-key", "no spaces"),
        (
            {"ph-0-field-0-key": "same", "ph-0-field-1-key": "same"},
            "ph-0",
            "duplicate entry field keys",
        ),
        (
            {"ph-0-submission_kind": "code", "ph-0-memory_mb": "10"},
            "ph-0-code_limits",
            "memory_mb: must be greater than or equal to 64",
        ),
        (
            {"ph-0-submission_kind": "code", "ph-0-memory_mb": "999999999"},
            "ph-0-code_limits",
            "this server allows at most",
        ),
        ({"ph-0-submission_kind": "notebook"}, "ph-0-submission_kind", "predictions"),
    ],
)
def test_a_refused_phase_setting_is_named_beside_its_field_and_what_was_typed_is_kept(
    client, person, browser, data, field, message
):
    web = _with_columns(person, browser)
    before = _phases(client, web)
    typed = {"ph-0-name": "dev", "ph-0-end": "2030-01-31", **data}
    refused = web.post(PAGE, page=PAGE, data={**typed, "action": "save"})
    assert refused.status_code == 422
    assert message in html.unescape(_error(refused.text, field))
    for name, value in typed.items():
        if name.endswith(("kind", "type", "op")):
            continue  # a choice of a list: the list is shown again, with its options
        assert f'name="{name}"' in refused.text and f'value="{value}"' in refused.text, name
    assert _phases(client, web) == before


def test_move_up_reorders_phases_columns_and_a_phases_own_columns(client, person, browser):
    web = _with_columns(person, browser)
    moved = web.post(PAGE, page=PAGE, data={**PHASES, **OWN, "action": "up-1"})
    assert 'name="ph-0-name" value="final"' in moved.text
    assert 'name="ph-0-col-0-key" value="mae"' in moved.text  # its rows go with it
    assert 'name="ph-1-name" value="dev"' in moved.text
    moved = web.post(PAGE, page=PAGE, data={**PHASES, **OWN, "action": "ph-1-col:up-1"})
    assert 'name="ph-1-col-0-key" value="rmse"' in moved.text
    assert 'name="ph-1-col-1-precision" min="0" max="15" value="2"' not in moved.text
    assert 'name="ph-1-col-0-precision" min="0" max="15" value="2"' in moved.text
    columns = f"/c/{SLUG}/host/new/columns"
    moved = web.post(columns, page=columns, data={**COLUMNS, "action": "up-1"})
    assert 'name="col-0-key" value="mae"' in moved.text
    assert 'name="col-1-key" value="rmse"' in moved.text
    # Saved, the ranking column is the one moved first.
    saved = web.post(
        columns, page=columns, data={**_shown(moved.text, "columns"), "action": "save"}
    )
    assert saved.status_code == 303, saved.text
    body = client.get(f"{API}/competitions/{SLUG}", headers=web.ada.headers).json()
    assert [c["key"] for c in body["leaderboard_columns"]] == ["mae", "rmse", "both"]


def test_row_buttons_of_a_phase_named_out_of_range_change_nothing(person, browser):
    web = _with_columns(person, browser)
    for action in (
        "ph-7-col:own",
        "ph-x-field:add",
        "ph-0-col:remove-9",
        "nowhere:add",
        "up-0",
        "up-99999999",
        "ph-0-col:up-x",
    ):
        shown = web.post(PAGE, page=PAGE, data={**PHASES, "action": action})
        assert shown.status_code == 200, action
        assert 'name="ph-0-name" value="dev"' in shown.text
        assert 'name="ph-1-name" value="final"' in shown.text
        assert '-col-0-key"' not in shown.text and '-field-0-key"' not in shown.text


def test_the_phases_step_refuses_the_wrong_users_and_changes_nothing(client, person, browser):
    ada = person("ada", organiser=True)
    olga = person("olga", organiser=True)
    person("alice")
    create_competition(client, ada.headers, "mine", status="draft", metric={"name": "rmse"})
    create_competition(client, olga.headers, "olgas", metric={"name": "rmse"})
    page = "/c/mine/host/new/phases"
    data = {
        "ph-0-name": "main",
        "ph-0-col-0-key": "rmse",
        "ph-0-col-0-kind": "rmse",
        "ph-0-field-0-key": "method_name",
        "action": "save",
    }
    for who in ("alice", "olga"):
        web = browser(who)
        assert web.get(page).status_code == 404, who  # a draft is not there for them
        for action in ("save", "ph-0-col:own", "ph-0-field:add"):
            # A refused form goes back with the refusal, as every form does, not to the draft.
            refused = web.post(page, page="/", data={**data, "action": action})
            assert refused.status_code == 303 and refused.headers["location"] == "/", who
            assert "no competition" in web.get("/").text, who
    anonymous = browser()
    assert anonymous.get(page, follow_redirects=False).status_code == 404
    posted = anonymous.http.post(page, data=data, follow_redirects=False)
    assert posted.status_code == 303 and posted.headers["location"].startswith("/signin")
    phase = client.get(f"{API}/competitions/mine", headers=ada.headers).json()["phases"][0]
    assert phase["columns"] is None and phase["entry_fields"] == []


class _Form(HTMLParser):
    """The fields a browser would post from a page's form whose action ends with ``action``:
    inputs' values, checked boxes, selected options (else the first), textareas' text."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action, self.inside, self.fields = action, False, {}
        self.select: str | None = None
        self.first: str | None = None
        self.textarea: str | None = None
        self.option: bool | None = None  # an option without a value, its text to come: selected?

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.inside = a.get("action", "").endswith(self.action)
        if not self.inside:
            return
        if tag == "input" and a.get("name") and a.get("type") != "file":
            if a.get("type") != "checkbox" or "checked" in a:
                self.fields[a["name"]] = a.get("value", "")
        elif tag == "select":
            self.select, self.first = a["name"], None
        elif tag == "option" and self.select:
            if "value" not in a:
                self.option = "selected" in a
            else:
                self._option(a["value"], "selected" in a)
        elif tag == "textarea":
            self.textarea = a["name"]
            self.fields[self.textarea] = ""

    def _option(self, value: str, selected: bool) -> None:
        assert self.select is not None
        if selected:
            self.fields[self.select] = value
        if self.first is None:
            self.first = value

    def handle_data(self, data: str) -> None:
        if self.textarea:
            self.fields[self.textarea] += data
        if self.option is not None:
            self._option(data.strip(), self.option)
            self.option = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        elif tag == "select" and self.select:
            self.fields.setdefault(self.select, self.first or "")
            self.select = None
        elif tag == "textarea":
            self.textarea = None


def _shown(page: str, action: str) -> dict[str, str]:
    form = _Form(action)
    form.feed(page)
    form.fields.pop("csrf_token", None)
    form.fields.pop("action", None)
    return {k: html.unescape(v) for k, v in form.fields.items()}


def test_an_imported_programs_columns_and_phases_post_back_as_shown(client, person, browser):
    # A Codabench bundle scored by its own program: columns the program writes, its phases.
    ada = person("ada", organiser=True)
    made = client.post(
        f"{API}/competitions/import",
        files={"file": ("bundle.zip", make_zip(codabench_files()), "application/zip")},
        data={"slug": "iris"},
        headers=ada.headers,
    )
    assert made.status_code == 201, made.text
    before = client.get(f"{API}/competitions/iris", headers=ada.headers).json()
    web = browser("ada")
    for step in ("columns", "phases"):
        page = f"/c/iris/host/new/{step}"
        shown = web.get(page).text
        if step == "phases":
            assert "Scored by its imported" in shown
        else:
            assert "written by the imported scoring program" in shown
        saved = web.post(page, page=page, data={**_shown(shown, step), "action": "save"})
        assert saved.status_code == 303, (step, saved.text)
    after = client.get(f"{API}/competitions/iris", headers=ada.headers).json()
    assert after["leaderboard_columns"] == before["leaderboard_columns"]
    assert after["metric"] == before["metric"]
    for old, new in zip(before["phases"], after["phases"], strict=True):
        assert {k: v for k, v in new.items() if k != "state"} == {
            k: v for k, v in old.items() if k != "state"
        }
    # A program's columns cannot become catalogue metrics' (the program read the key, not a
    # metric): refused, what was typed kept.
    page = "/c/iris/host/new/columns"
    shown = _shown(web.get(page).text, "columns")
    typed = {k: "rmse" if v == "program" else v for k, v in shown.items()}
    assert typed != shown
    refused = web.post(page, page=page, data={**typed, "action": "save"})
    assert refused.status_code == 422
    assert "this competition is scored by its imported program" in html.unescape(refused.text)
    assert _shown(refused.text, "columns") == typed


def test_a_migration_into_the_final_phase_is_set_on_the_page_and_kept_on_a_second_save(
    client, person, browser
):
    web = _with_columns(person, browser)
    data = {**PHASES, "ph-1-migrate_from": "dev", "ph-1-migrate_take": "last", "action": "save"}
    assert web.post(PAGE, page=PAGE, data=data).status_code == 303
    assert _phases(client, web)["final"]["migrate"] == {"from": "dev", "take": "last"}
    # The page shows it again, so saving the step unchanged keeps it.
    shown = web.get(PAGE).text
    assert 'name="ph-1-migrate_from" value="dev"' in shown
    bad = {**PHASES, "ph-1-migrate_from": "nope", "action": "save"}
    refused = web.post(PAGE, page=PAGE, data=bad)
    assert refused.status_code == 422 and "is not another phase" in html.unescape(refused.text)


def test_a_multi_task_phase_posts_back_as_shown_keeping_its_tasks(client, person, browser):
    # The page edits a phase's window and rules; its tasks (the API's, the YAML's) stay.
    from tests.bundles.test_program_scoring import two_task_bundle

    ada = person("ada", organiser=True)
    made = client.post(
        f"{API}/competitions/import",
        files={"file": ("bundle.zip", two_task_bundle(), "application/zip")},
        data={"slug": "two"},
        headers=ada.headers,
    )
    assert made.status_code == 201, made.text
    before = client.get(f"{API}/competitions/two", headers=ada.headers).json()["phases"]
    web = browser("ada")
    page = "/c/two/host/new/phases"
    shown = web.get(page).text
    saved = web.post(page, page=page, data={**_shown(shown, "phases"), "action": "save"})
    assert saved.status_code == 303, saved.text
    after = client.get(f"{API}/competitions/two", headers=ada.headers).json()["phases"]
    assert after[0]["tasks"] == before[0]["tasks"]
    # The aggregate stays (its direction, minimize, is its op's and need not be stated).
    (average,) = after[0]["columns"]
    assert average == {k: v for k, v in before[0]["columns"][0].items() if k != "direction"}
