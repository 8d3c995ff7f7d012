"""The host commands of `podium competitions`, run as a host would, against a real server:
from `init` to `publish`, then archiving and deleting; and the file reader's refusals."""

import json
import subprocess
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from app.client.bodyfile import MAX_BYTES, BodyFileError, parse
from app.client.host import template
from app.metrics import all_metrics
from tests.client.test_participant_cli import one_error_line, podium
from tests.helpers import KEY
from tests.live_server import HTTP, LiveServer, free_port, live_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("host-cli"), free_port()) as running:
        yield running


def _as(server: LiveServer, home: Path, who: str, *args: str) -> subprocess.CompletedProcess[str]:
    return podium(home, *args, PODIUM_URL=server.url, PODIUM_TOKEN=server.tokens[who])


def _filled(text: str, slug: str) -> str:
    return text.replace("slug: my-competition", f"slug: {slug}")


def test_init_to_publish_round_trip(server: LiveServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    init = _as(server, home, "host", "competitions", "init", "--metric", "roc_auc")
    assert init.returncode == 0, init.stderr
    spec = home / "competition.yaml"
    # Opened already, so that a participant can read the data once it is published.
    spec.write_text(
        _filled(init.stdout, "round-trip").replace("start: 2030-01-01", "start: 2020-01-01")
    )

    created = _as(server, home, "host", "competitions", "create", str(spec))
    assert created.returncode == 0, created.stderr
    assert f"{server.url}/c/round-trip" in created.stdout
    assert "answer_key" in created.stdout and "still needed" in created.stdout
    # A draft: the host lists it, a participant does not.
    assert "round-trip" in _as(server, home, "host", "competitions").stdout
    assert "round-trip" not in _as(server, home, "alice", "competitions", "list").stdout

    key = home / "key.csv"
    key.write_bytes(KEY)
    uploaded = _as(server, home, "host", "competitions", "key", "round-trip", str(key))
    assert uploaded.returncode == 0, uploaded.stderr
    assert "version 1" in uploaded.stdout
    train = home / "train.csv"
    # Past the size from which a progress bar is drawn (on stderr; stdout keeps the result).
    rows = b"".join(f"r{i},{i}\n".encode() for i in range(200_000))
    train.write_bytes(b"id,x\n" + rows)
    assert train.stat().st_size > 1 << 20
    sent = _as(server, home, "host", "competitions", "files", "round-trip", str(train))
    assert sent.returncode == 0, sent.stderr
    assert f"uploaded train.csv ({train.stat().st_size:,} bytes)" in sent.stdout
    assert "train.csv" in sent.stderr

    checklist = _as(server, home, "host", "competitions", "checklist", "round-trip")
    assert checklist.returncode == 0 and "ready to publish" in checklist.stdout
    published = _as(server, home, "host", "competitions", "publish", "round-trip")
    assert published.returncode == 0, published.stderr
    assert "round-trip" in _as(server, home, "alice", "competitions").stdout
    files = _as(server, home, "alice", "files", "round-trip")
    assert "train.csv" in files.stdout

    archived = _as(server, home, "host", "competitions", "archive", "round-trip", "--yes")
    assert archived.returncode == 0, archived.stderr
    listed = _as(server, home, "alice", "competitions").stdout
    assert any("round-trip" in line and "archived" in line for line in listed.splitlines())


def _get(server: LiveServer, who: str, slug: str) -> dict:  # type: ignore[type-arg]

    response = HTTP.get(
        f"{server.url}/api/v1/competitions/{slug}",
        headers={"Authorization": f"Bearer {server.tokens[who]}"},
    )
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


# The templates' dates start today; a test that edits one of its dates pins the day it starts.
PINNED = date(2030, 1, 1)
REG_KEY = b"id,y,Usage\na,1.0,Public\nb,2.0,Public\nc,3.0,Private\nd,4.0,Private\n"


def test_a_two_phase_round_trip_from_init_to_publish(server: LiveServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    init = _as(server, home, "host", "competitions", "init", "--metric", "rmse", "--phases", "2")
    assert init.returncode == 0, init.stderr
    # A second column and a computed one, uncommented as a host would.
    text = (
        _filled(init.stdout, "two-phases")
        .replace(
            "  # - key: second\n  #   metric: {name: ANOTHER_METRIC}",
            "  - key: second\n    metric: {name: mae}",
        )
        .replace("  # - key: average\n  #   computed:", "  - key: average\n    computed:")
    )
    spec = home / "competition.yaml"
    spec.write_text(text)
    created = _as(server, home, "host", "competitions", "create", str(spec))
    assert created.returncode == 0, created.stderr
    assert "phases.phase-1.answer_key" in created.stdout
    assert "phases.phase-2.sample_scores.average" in created.stdout
    shown = _get(server, "host", "two-phases")
    assert [p["name"] for p in shown["phases"]] == ["phase-1", "phase-2"]
    assert [p["board"] for p in shown["phases"]] == ["public", "blind"]
    assert [c["key"] for c in shown["leaderboard_columns"]] == ["rmse", "second", "average"]

    key = home / "key.csv"
    key.write_bytes(REG_KEY)
    # Without --phase the legacy route answers which phases there are, in one line.
    unnamed = _as(server, home, "host", "competitions", "key", "two-phases", str(key))
    assert "phase-1, phase-2" in one_error_line(unnamed)
    for phase in ("phase-1", "phase-2"):
        sent = _as(
            server, home, "host", "competitions", "key", "two-phases", "--phase", phase, str(key)
        )
        assert sent.returncode == 0, sent.stderr
        assert "version 1 (4 rows: 2 public, 2 private)" in sent.stdout
    checklist = _as(server, home, "host", "competitions", "checklist", "two-phases")
    assert "ready to publish" in checklist.stdout, checklist.stdout
    assert "MISSING" not in checklist.stdout
    published = _as(server, home, "host", "competitions", "publish", "two-phases")
    assert published.returncode == 0, published.stderr
    assert _get(server, "alice", "two-phases")["status"] == "published"


def test_a_phase_error_names_the_phase_and_its_line(server: LiveServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    text = _filled(template("rmse", 2, PINNED), "bad-phase").replace(
        "end: 2030-03-03", "end: 2030-01-15"
    )
    spec = home / "c.yaml"
    spec.write_text(text)
    line_no = text.splitlines().index("  - name: phase-2   # lowercase letters, digits and '-'") + 1
    line = one_error_line(_as(server, home, "host", "competitions", "create", str(spec)))
    assert f"c.yaml line {line_no}: phases.1:" in line
    assert "end must come after start" in line
    # The server's own refusal (a computed column of a column that is not there) names its line.
    text = _filled(template("rmse", 2, PINNED), "bad-column").replace(
        "  # - key: average\n  #   computed: {op: mean, of: [rmse, second]}",
        "  - key: average\n    computed: {op: mean, of: [rmse, second]}",
    )
    spec.write_text(text)
    line = one_error_line(_as(server, home, "host", "competitions", "create", str(spec)))
    assert "second" in line and "c.yaml line" in line


def test_create_with_publish_names_what_is_missing(server: LiveServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    spec = home / "c.yaml"
    home.mkdir()
    spec.write_text(_filled(template("rmse"), "not-yet"))
    result = _as(server, home, "host", "competitions", "create", str(spec), "--publish")
    line = one_error_line(result)
    assert "not-yet stays a draft" in line and "answer_key" in line


def test_a_participant_cannot_create_and_a_draft_is_deleted(server: LiveServer, tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    spec = home / "c.json"
    body = {"slug": "gone-soon", "title": "Gone", "metric": {"name": "rmse"}}
    spec.write_text(json.dumps(body))
    refused = _as(server, home, "alice", "competitions", "create", str(spec))
    assert "only organisers" in one_error_line(refused)
    assert _as(server, home, "host", "competitions", "create", str(spec)).returncode == 0
    other = _as(server, home, "bob", "competitions", "delete", "gone-soon", "--yes")
    assert "no competition" in one_error_line(other)  # a draft: not even there for bob
    deleted = _as(server, home, "host", "competitions", "delete", "gone-soon", "--yes")
    assert deleted.returncode == 0, deleted.stderr
    again = _as(server, home, "host", "competitions", "checklist", "gone-soon")
    assert "no competition" in one_error_line(again)


def test_a_field_error_names_the_field_and_its_line(server: LiveServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    text = _filled(template("roc_auc", today=PINNED), "bad-date").replace(
        "deadline: 2030-01-31", "deadline: 2030-02-30"
    )
    spec = home / "c.yaml"
    spec.write_text(text)
    line_no = text.splitlines().index("deadline: 2030-02-30") + 1
    line = one_error_line(_as(server, home, "host", "competitions", "create", str(spec)))
    assert f"c.yaml line {line_no}: deadline:" in line
    # The server's own refusals (an unknown metric) come back as one line too.
    spec.write_text(
        _filled(template("roc_auc"), "bad-metric").replace("name: roc_auc", "name: nope")
    )
    assert "unknown metric 'nope'" in one_error_line(
        _as(server, home, "host", "competitions", "create", str(spec))
    )


# --- the file reader, without a server ------------------------------------------------------


def test_every_metrics_template_is_a_valid_body() -> None:
    from app.competitions.schemas import CompetitionCreate

    for metric in all_metrics():
        data = parse(template(metric.name), is_json=False).data
        CompetitionCreate.model_validate(data)
        metric.parse_params(data["metric"]["params"])
        for phases in (1, 3):
            phased = parse(template(metric.name, phases), is_json=False).data
            body = CompetitionCreate.model_validate(phased)
            assert body.phases is not None and len(body.phases) == phases
            assert body.columns is not None and body.columns[0].key == metric.name
            metric.parse_params(phased["columns"][0]["metric"]["params"])


def test_a_billion_laughs_file_is_refused() -> None:
    laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
    )
    with pytest.raises(BodyFileError, match="aliases"):
        parse(laughs, is_json=False)
    # Few aliases, each expanding the last threefold: refused by the expanded size.
    deep = (
        "a: &a ["
        + ", ".join(["x"] * 100)
        + "]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 3)}]\n"
            for i in range(9)
        )
    )
    with pytest.raises(BodyFileError, match="expands"):
        parse(deep, is_json=False)


def test_yaml_tags_are_refused() -> None:
    with pytest.raises(BodyFileError, match="line 1"):
        parse("slug: !!python/object/apply:os.system [ls]\n", is_json=False)


def test_an_oversized_or_non_mapping_file_is_refused(tmp_path: Path) -> None:
    from app.client.bodyfile import read_body

    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (MAX_BYTES + 1))
    with pytest.raises(BodyFileError, match="larger than"):
        read_body(big)
    with pytest.raises(BodyFileError, match="mapping"):
        parse("- a\n- b\n", is_json=False)
    with pytest.raises(BodyFileError, match="line 1"):
        parse('{"slug": }', is_json=True)


def test_yaml_dates_reach_the_api_as_written() -> None:
    data = parse("start: 2030-01-01\ndeadline: 2030-01-31T18:00:00\n", is_json=False).data
    assert data == {"start": "2030-01-01", "deadline": "2030-01-31T18:00:00"}
