"""The official `kaggle` client's host commands (`competitions init`, `create`, `solution`,
`data update`, `settings update`, `pages`, `team-submissions`), run unchanged against a real
Podium server on http://localhost:80: test_official_client.py's, which collects these tests, with the wrong users too: a
participant, and an organiser who does not host the competition. The assertions are on what
the client prints and on the database."""

import csv
import io
import json
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from app.auth.service import create_user
from app.db import make_engine, make_session_factory, unit_of_work
from app.models import AnswerKey, Competition, DataFile, Role, SubmissionStatus, Team
from tests.helpers import KEY, PERFECT, PUBLIC_HALF
from tests.kaggle import test_official_client as base
from tests.live_server import SECRET, LiveServer

# Collected as part of test_official_client.py (which imports these tests), on its server.
kaggle = base.kaggle
CREATED_URL = "http://localhost/c/{slug}/host/new/columns"


@pytest.fixture(scope="module")
def carol(server: LiveServer) -> str:
    """An organiser who hosts none of the competitions made here."""
    engine = make_engine(server.database_url)
    with unit_of_work(make_session_factory(engine)) as session:
        _user, token = create_user(session, name="carol", role=Role.organiser, secret_key=SECRET)
    engine.dispose()
    server.tokens["carol"] = token
    return "carol"


def said(result) -> str:  # type: ignore[no-untyped-def]
    return result.stdout + result.stderr


def refused(result, words: str) -> None:  # type: ignore[no-untyped-def]
    """The client failed, printing Podium's sentence and no traceback."""
    assert result.returncode != 0, said(result)
    assert "Traceback" not in result.stderr, result.stderr
    assert words in said(result), said(result)


def api(server: LiveServer) -> httpx.Client:
    headers = {"Authorization": f"Bearer {server.tokens['host']}"}
    return httpx.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=30)


def draft(server: LiveServer) -> str:
    """A draft made through the API (not the client under test), hosted by ``host``."""
    slug = f"draft-{uuid.uuid4().hex[:10]}"
    body = {"slug": slug, "title": "Draft", "metric": {"name": "roc_auc"}, "status": "draft"}
    with api(server) as client:
        assert client.post("/competitions", json=body).status_code == 201
    return slug


def competition(server: LiveServer, slug: str) -> Competition:
    with server.session() as session:
        found = session.scalar(select(Competition).where(Competition.slug == slug))
        assert found is not None
        session.expunge(found)
        return found


def metadata(folder: Path, **fields: object) -> None:
    path = folder / "competition-metadata.json"
    meta = json.loads(path.read_text())
    meta.update(fields)
    path.write_text(json.dumps(meta))


# --- init and create ------------------------------------------------------------------------


def test_init_writes_the_template_and_create_makes_a_draft_for_organisers_only(
    server, carol, tmp_path
):
    made = kaggle(server, "competitions", "init", str(tmp_path), user="host")
    assert made.returncode == 0, said(made)
    template = json.loads((tmp_path / "competition-metadata.json").read_text())
    assert template["slug"] == "INSERT_SLUG_HERE" and template["privacy"] == "PUBLIC"
    # The client itself refuses its untouched template.
    refused(kaggle(server, "competitions", "create", "-p", str(tmp_path)), "Default title")

    slug = f"kg-{uuid.uuid4().hex[:10]}"
    metadata(tmp_path, title="Churn, the sequel", slug=slug, briefDescription="Predict churn.")
    refused(
        kaggle(server, "competitions", "create", "-p", str(tmp_path), user="alice"),
        "only organisers may create competitions",
    )
    with server.session() as session:
        assert session.scalar(select(Competition).where(Competition.slug == slug)) is None

    created = kaggle(server, "competitions", "create", "-p", str(tmp_path), user="host")
    assert created.returncode == 0, said(created)
    assert f"Competition created: {CREATED_URL.format(slug=slug)}" in created.stdout
    made_draft = competition(server, slug)
    assert (made_draft.status, made_draft.title, made_draft.description) == (
        "draft",
        "Churn, the sequel",
        "Predict churn.",
    )
    assert made_draft.registration == "open"
    # Only its hosts see a draft: not carol, another organiser.
    hosts = kaggle(server, "competitions", "hosts", slug, user="host")
    assert "host (owner)" in hosts.stdout, said(hosts)
    refused(kaggle(server, "competitions", "hosts", slug, user="carol"), f"no competition '{slug}'")

    refused(
        kaggle(server, "competitions", "create", "-p", str(tmp_path), user="host"),
        "already exists",
    )
    private = f"kg-{uuid.uuid4().hex[:10]}"
    metadata(tmp_path, slug=private, privacy="PRIVATE")
    assert (
        kaggle(server, "competitions", "create", "-p", str(tmp_path), user="host").returncode == 0
    )
    assert competition(server, private).registration == "invite"


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"slug": "Not A Slug!"}, "slug"),
        ({"slug": "x" * 300}, "slug"),
        ({"title": "t" * 5000}, "title"),
        ({"cloneCompetitionId": 7}, "Podium does not clone competitions"),
        ({"hackathon": True}, "Podium has no hackathons"),
    ],
)
def test_create_refuses_what_podium_cannot_make_with_a_sentence(server, tmp_path, fields, words):
    assert kaggle(server, "competitions", "init", str(tmp_path), user="host").returncode == 0
    metadata(tmp_path, title="T", slug=f"kg-{uuid.uuid4().hex[:10]}", briefDescription="B")
    metadata(tmp_path, **fields)
    refused(kaggle(server, "competitions", "create", "-p", str(tmp_path), user="host"), words)


# --- solution -------------------------------------------------------------------------------


def test_solution_create_stores_the_answer_key_for_its_hosts_and_status_reads_it(
    server, carol, tmp_path
):
    slug = draft(server)
    (tmp_path / "solution.csv").write_bytes(KEY)
    args = ("competitions", "solution", "create", slug, "-p", str(tmp_path / "solution.csv"))
    before = kaggle(server, "competitions", "solution", "status", slug, user="host")
    assert before.returncode == 0 and "Ready: false" in before.stdout, said(before)

    refused(kaggle(server, *args, user="alice"), "only a competition's hosts upload")
    refused(kaggle(server, *args, user="carol"), f"no competition '{slug}'")
    refused(
        kaggle(server, "competitions", "solution", "status", slug, user="alice"),
        f"no competition '{slug}'",
    )
    assert _keys(server, slug) == []

    stored = kaggle(server, *args, user="host")
    assert stored.returncode == 0, said(stored)
    assert f'Solution uploaded for "{slug}"' in stored.stdout
    [rows] = _keys(server, slug)
    status = kaggle(server, "competitions", "solution", "status", slug, user="host")
    assert "Ready: true" in status.stdout and "Row ID column: id" in status.stdout, said(status)
    assert f"total={rows[0]}, public={rows[1]}, private={rows[2]}" in status.stdout


def _keys(server: LiveServer, slug: str) -> list[tuple[int, int, int]]:
    """The competition's answer keys: (rows, public rows, private rows) each."""
    with server.session() as session:
        found = session.execute(
            select(AnswerKey.n_rows, AnswerKey.n_public, AnswerKey.n_private)
            .join(Competition)
            .where(Competition.slug == slug)
        )
        return [tuple(row) for row in found]  # type: ignore[misc]


def test_a_solution_podium_cannot_read_is_refused_with_its_reason(server, tmp_path):
    slug = draft(server)
    (tmp_path / "bad.csv").write_bytes(b"id,target\na,1\na,0\n")
    result = kaggle(
        server, "competitions", "solution", "create", slug, "-p", str(tmp_path / "bad.csv"),
        user="host",
    )  # fmt: skip
    refused(result, "'a'")
    (tmp_path / "empty.csv").write_bytes(b"")
    empty = kaggle(
        server, "competitions", "solution", "create", slug, "-p", str(tmp_path / "empty.csv"),
        user="host",
    )  # fmt: skip
    assert empty.returncode != 0 and "Traceback" not in empty.stderr, said(empty)
    assert _keys(server, slug) == []


# --- data update ----------------------------------------------------------------------------


def _names(server: LiveServer, slug: str) -> dict[str, str]:
    with server.session() as session:
        found = session.scalars(
            select(DataFile).join(Competition).where(Competition.slug == slug)
        ).all()
        return {f.name: f.visibility for f in found}


def test_data_update_replaces_the_public_files_and_rerun_the_hidden_ones(server, carol, tmp_path):
    slug, _title = base.own_competition(server)
    with api(server) as client:
        for name, visibility in (("old.csv", "public"), ("inputs.csv", "hidden")):
            put = client.put(
                f"/competitions/{slug}/files/{name}",
                params={"visibility": visibility},
                content=b"id\n1\n",
            )
            assert put.status_code == 201, put.text
    folder = tmp_path / "v2"
    folder.mkdir()
    (folder / "train.csv").write_bytes(b"id,x\n1,2\n")
    (folder / "test.csv").write_bytes(b"id\n3\n")
    (folder / ".DS_Store").write_bytes(b"skipped by the client")
    args = ("competitions", "data", "update", slug, "-p", str(folder), "-m", "v2")

    refused(kaggle(server, *args, user="alice"), "only a competition's hosts upload")
    refused(kaggle(server, *args, user="carol"), "only the hosts")
    assert _names(server, slug) == {"old.csv": "public", "inputs.csv": "hidden"}

    updated = kaggle(server, *args, user="host")
    assert updated.returncode == 0, said(updated)
    assert (
        f'New data version created for "{slug}": http://localhost/c/{slug}/data' in updated.stdout
    )
    # The public set replaced in full; the hidden file untouched.
    assert _names(server, slug) == {
        "train.csv": "public",
        "test.csv": "public",
        "inputs.csv": "hidden",
    }
    listed = base.table(kaggle(server, "competitions", "files", slug, user="alice"))
    assert sorted(row[0] for row in listed) == ["test.csv", "train.csv"]
    got = kaggle(
        server, "competitions", "download", slug, "-f", "train.csv", user="alice", cwd=tmp_path
    )
    assert got.returncode == 0, said(got)
    assert (tmp_path / "train.csv").read_bytes() == b"id,x\n1,2\n"

    hidden = tmp_path / "rerun"
    hidden.mkdir()
    (hidden / "private-inputs.csv").write_bytes(b"id\n9\n")
    rerun = kaggle(
        server, "competitions", "data", "update", slug, "-p", str(hidden), "-m", "r", "--rerun",
        user="host",
    )  # fmt: skip
    assert rerun.returncode == 0, said(rerun)
    assert _names(server, slug) == {
        "train.csv": "public",
        "test.csv": "public",
        "private-inputs.csv": "hidden",
    }
    listed = base.table(kaggle(server, "competitions", "files", slug, user="alice"))
    assert "private-inputs.csv" not in {row[0] for row in listed}


def test_data_update_refuses_folders_and_bad_names_and_keeps_the_files(server, tmp_path):
    slug, _title = base.own_competition(server)
    nested = tmp_path / "nested"
    (nested / "images").mkdir(parents=True)
    (nested / "images" / "a.png").write_bytes(b"png")
    refused(
        kaggle(server, "competitions", "data", "update", slug, "-p", str(nested), "-m", "x",
               user="host"),
        "upload a folder as one zip",
    )  # fmt: skip
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "-rf.csv").write_bytes(b"x")
    refused(
        kaggle(server, "competitions", "data", "update", slug, "-p", str(odd), "-m", "x",
               user="host"),
        "not a valid file name",
    )  # fmt: skip
    (tmp_path / "key.csv").write_bytes(KEY)
    refused(
        kaggle(server, "competitions", "data", "update", slug, "-p", str(tmp_path / "key.csv"),
               "-m", "x", user="host"),
        "answer key",
    )  # fmt: skip
    assert _names(server, slug) == {}


# --- settings update ------------------------------------------------------------------------


def test_settings_update_changes_the_title_and_deadline_for_its_hosts_only(server, carol, tmp_path):
    slug, _title = base.own_competition(server)
    (tmp_path / "s.json").write_text(
        json.dumps({"title": "Renamed", "deadline": "2031-01-01T00:00:00Z", "hasLeaderboard": True})
    )
    args = ("competitions", "settings", "update", slug, "-f", str(tmp_path / "s.json"))
    refused(kaggle(server, *args, user="alice"), "only the hosts")
    refused(kaggle(server, *args, user="carol"), "only the hosts")
    assert competition(server, slug).deadline is None

    done = kaggle(server, *args, user="host")
    assert done.returncode == 0, said(done)
    assert f'Settings updated on competition "{slug}" (3 field(s))' in done.stdout
    assert "title: Renamed" in done.stdout and "deadline: 2031-01-01T00:00:00" in done.stdout
    changed = competition(server, slug)
    assert changed.title == "Renamed"
    assert changed.deadline is not None and changed.deadline.year == 2031

    # A YAML file too, as the client reads one; clearing the deadline.
    (tmp_path / "s.yaml").write_text("deadline: null\n")
    cleared = kaggle(
        server, "competitions", "settings", "update", slug, "-f", str(tmp_path / "s.yaml"),
        user="host",
    )  # fmt: skip
    assert cleared.returncode == 0, said(cleared)
    assert competition(server, slug).deadline is None


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"disableSubmissions": True}, "Podium has no setting 'disableSubmissions'"),
        ({"competitionName": "another"}, "address never changes"),
        ({"maxPendingSubmissionsPerTeam": 3}, "no meaning on Podium"),
        ({"title": ""}, "a competition needs a title"),
        ({"title": "t" * 500}, "title"),
        ({"deadline": "9999-12-31T23:00:00-12:00"}, "out of range"),
        ({"deadline": "1990-01-01T00:00:00Z"}, "deadline must come after start"),
    ],
)
def test_settings_update_refuses_with_a_sentence(server, tmp_path, settings, words):
    slug, _title = base.own_competition(server)
    (tmp_path / "s.json").write_text(json.dumps(settings))
    refused(
        kaggle(server, "competitions", "settings", "update", slug, "-f", str(tmp_path / "s.json"),
               user="host"),
        words,
    )  # fmt: skip
    assert competition(server, slug).title.startswith("Own ")


# --- pages ----------------------------------------------------------------------------------


def _pages(server: LiveServer, slug: str, user: str = "host") -> dict[str, str]:
    # ``pages list SLUG`` and ``pages SLUG`` do not parse in kaggle 2.2.5 (its ``pages`` takes
    # a competition of its own before the subcommand): ``pages list -c SLUG`` and ``pages -c
    # SLUG`` do.
    listed = kaggle(
        server, "competitions", "pages", "list", "-c", slug, "-v", "--content", user=user
    )
    assert listed.returncode == 0, said(listed)
    if "No pages found" in listed.stdout:
        return {}
    return {row["name"]: row["content"] for row in csv.DictReader(io.StringIO(listed.stdout))}


# kaggle 2.2.5's command line cannot run ``pages create``, ``update`` or ``delete``: its parser
# hands them the list's options and the client stops with a TypeError before any request. They
# are run here as the client's own Python API runs them (the same ``*_cli`` methods the command
# line would call, printing the same lines).
PAGES_API = """
import json, sys
from requests.exceptions import HTTPError
from kaggle import api
try:
    getattr(api, sys.argv[1])(**json.loads(sys.argv[2]))
except HTTPError as error:
    print(error, file=sys.stderr)
    sys.exit(1)
"""


def page(server: LiveServer, action: str, user: str = "host", **kwargs: object):  # type: ignore[no-untyped-def]
    """``kaggle competitions pages ACTION`` through the client's API."""
    method = f"competition_{action}_page_cli"
    return kaggle(server, method, json.dumps(kwargs), user=user, python=PAGES_API)


def test_pages_are_the_description_and_the_rules_changed_by_hosts_only(server, carol, tmp_path):
    slug, _title = base.own_competition(server)
    assert _pages(server, slug) == {}
    (tmp_path / "d.md").write_text("# Churn\n\nPredict who leaves.\n")
    create = {"competition": slug, "page_name": "description", "file_path": str(tmp_path / "d.md")}
    # A launched competition's pages are shown with it: none is staged apart.
    refused(page(server, "create", **create), "add --publish")
    refused(page(server, "create", user="alice", **create, publish=True), "only the hosts")
    refused(page(server, "create", user="carol", **create, publish=True), "only the hosts")

    made = page(server, "create", **create, publish=True)
    assert made.returncode == 0, said(made)
    assert f'Page "description" created on competition "{slug}" — published.' in made.stdout
    assert competition(server, slug).description == "# Churn\n\nPredict who leaves.\n"
    refused(page(server, "create", **create, publish=True), "pages update")
    # Participants read the pages, as on the competition's page.
    assert _pages(server, slug, user="alice") == {"description": "# Churn\n\nPredict who leaves.\n"}

    (tmp_path / "d2.md").write_text("Predict churn, better.")
    update = {"competition": slug, "page_name": "description"}
    new_text = {"file_path": str(tmp_path / "d2.md")}
    refused(page(server, "update", user="alice", **update, **new_text), "only the hosts")
    updated = page(server, "update", **update, **new_text)
    assert updated.returncode == 0, said(updated)
    assert f'Page "description" updated on competition "{slug}".' in updated.stdout
    assert competition(server, slug).description == "Predict churn, better."
    refused(page(server, "update", **update, mime_type="text/html"), "Markdown")
    refused(page(server, "update", **update, new_name="overview"), "keeps its name")
    refused(page(server, "update", **update, post_title="Overview"), "no title")
    refused(page(server, "update", **update, unpublish=True), "add --publish")

    (tmp_path / "r.md").write_text("Be fair.")
    rules = {"competition": slug, "page_name": "rules", "file_path": str(tmp_path / "r.md")}
    made_rules = page(server, "create", **rules, publish=True)
    assert made_rules.returncode == 0, said(made_rules)
    assert (competition(server, slug).rules, competition(server, slug).rules_version) == (
        "Be fair.",
        1,
    )
    assert list(_pages(server, slug)) == ["description", "rules"]
    only = kaggle(server, "competitions", "pages", "-c", slug, "-v", "--page-name", "rules")
    assert [r["name"] for r in csv.DictReader(io.StringIO(only.stdout))] == ["rules"], said(only)

    delete = {"competition": slug, "page_name": "rules", "no_confirm": True}
    refused(page(server, "delete", user="carol", **delete), "only the hosts")
    deleted = page(server, "delete", **delete)
    assert deleted.returncode == 0, said(deleted)
    assert f'Page "rules" deleted from competition "{slug}".' in deleted.stdout
    assert competition(server, slug).rules == ""
    refused(page(server, "delete", **delete), "has no rules page")
    refused(
        page(server, "create", **{**rules, "page_name": "evaluation"}, publish=True),
        "Podium has no page 'evaluation'",
    )


def test_a_draft_stages_its_pages_until_launch_and_a_huge_page_is_refused(server, tmp_path):
    slug = draft(server)
    (tmp_path / "d.md").write_text("A draft's text.")
    create = {"competition": slug, "page_name": "description", "file_path": str(tmp_path / "d.md")}
    staged = page(server, "create", **create)
    assert staged.returncode == 0, said(staged)
    assert "staged (unpublished)" in staged.stdout
    (tmp_path / "huge.md").write_text("x" * 2_000_000)
    refused(
        page(
            server, "update", competition=slug, page_name="description",
            file_path=str(tmp_path / "huge.md"),
        ),
        "larger than the 1,048,576-byte limit",
    )  # fmt: skip
    assert competition(server, slug).description == "A draft's text."


# --- team-submissions -----------------------------------------------------------------------


def test_team_submissions_lists_a_teams_submission_on_the_public_board(server):
    slug, _title = base.own_competition(server)
    mine = base.submitted(server, slug, "alice", "a.csv", PERFECT)
    theirs = base.submitted(server, slug, "bob", "b.csv", PUBLIC_HALF)
    assert (mine.status, theirs.status) == (SubmissionStatus.scored, SubmissionStatus.scored)
    with server.session() as session:
        team_id = session.scalar(select(Team.id).where(Team.id == mine.team_id))
    listed = kaggle(server, "competitions", "team-submissions", str(team_id), "-v", user="bob")
    assert listed.returncode == 0, said(listed)
    [row] = list(csv.DictReader(io.StringIO(listed.stdout)))
    assert (int(row["id"]), float(row["publicScore"])) == (mine.id, 1.0)
    refused(kaggle(server, "competitions", "team-submissions", "2147483647"), "no team")
