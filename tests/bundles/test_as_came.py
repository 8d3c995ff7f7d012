"""Bundles publish as their platform ran them: phases in any order and overlapping, a last phase
that never ends, a quota of 0 read as its platform reads it, past dates kept (an ended
competition) or moved by one offset when the host asks; each thing a host may want to change is
named in the import's warnings with its fix."""

from datetime import UTC, datetime, timedelta
from typing import Any

from app.bundles.as_came import as_came
from app.bundles.model import NO_DAILY_LIMIT, Column, Competition, Page, Phase
from tests.asgi_client import TestClient
from tests.bundles.builders import (
    CODABENCH_CONFIG,
    CODALAB_CONFIG,
    codabench_files,
    codalab_files,
    evalai_files,
    make_zip,
)
from tests.bundles.test_import_api import import_bundle
from tests.bundles.test_program_scoring import accept_rules
from tests.conftest import Caller
from tests.helpers import API

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def _model(*phases: Phase) -> Competition:
    column = Column(key="score", title="Score", direction="maximize")
    return Competition(
        title="T",
        slug="t",
        description=Page(title="Overview", content="x"),
        pages=(),
        columns=(column,),
        ranking="score",
        phases=phases,
        source_format="codabench",
    )


def _phase(name: str, start: datetime, end: datetime | None, **kw: Any) -> Phase:
    return Phase(name=name, title=name, start=start, end=end, **kw)


def test_past_dates_are_kept_and_named_with_both_fixes() -> None:
    past = _model(
        _phase("dev", datetime(2013, 6, 30, tzinfo=UTC), datetime(2013, 9, 30, tzinfo=UTC)),
        _phase("final", datetime(2013, 9, 30, tzinfo=UTC), datetime(2013, 12, 31, tzinfo=UTC)),
    )
    made = as_came(past, now=NOW, slug="pi")
    assert made.phases == past.phases
    (warning,) = [w for w in made.warnings if "dates are past" in w]
    assert "--start-now" in warning and "podium competitions phase pi final" in warning


def test_start_now_moves_every_date_by_one_offset() -> None:
    dev_start = datetime(2013, 6, 30, tzinfo=UTC)
    past = _model(
        _phase("dev", dev_start, datetime(2013, 9, 30, tzinfo=UTC)),
        _phase("final", datetime(2013, 9, 30, tzinfo=UTC), None),
    )
    made = as_came(past, now=NOW, slug="pi", start_now=True)
    offset = NOW - dev_start
    assert made.phases[0].start == NOW
    assert made.phases[0].end == datetime(2013, 9, 30, tzinfo=UTC) + offset
    assert made.phases[1].start == datetime(2013, 9, 30, tzinfo=UTC) + offset
    assert made.phases[1].end is None
    assert any(w.startswith("--start-now: every date moved by") for w in made.warnings)
    assert not any("dates are past" in w for w in made.warnings)


def test_an_open_ended_phase_a_phase_out_of_order_and_big_quotas_are_named() -> None:
    made = as_came(
        _model(
            _phase("dev", datetime(2030, 2, 1, tzinfo=UTC), datetime(2030, 6, 1, tzinfo=UTC)),
            _phase(
                "test",
                datetime(2030, 1, 1, tzinfo=UTC),
                None,
                daily_submission_limit=100_000,
                total_submission_limit=0,
            ),
        ),
        now=NOW,
        slug="evalai",
    )
    assert made.phases[1].daily_submission_limit == NO_DAILY_LIMIT
    assert made.phases[1].total_submission_limit is None
    text = "\n".join(made.warnings)
    assert "phase 'test' has no end" in text and "phase evalai test --end DATE" in text
    assert "phase 'test' starts before phase 'dev'" in text
    assert "allows 100,000 submissions a day" in text


def _publish(client: TestClient, host: Caller, slug: str) -> Any:
    return client.post(f"{API}/competitions/{slug}/publish", headers=host.headers)


def test_codabench_iris_shape_a_zero_quota_and_a_phase_that_never_ends_publish_unedited(
    client: TestClient, host: Caller
) -> None:
    # Codabench's iris: the final phase says max_submissions_per_day: 0 and never ends.
    config = CODABENCH_CONFIG.replace(
        "max_submissions_per_day: 2\n  max_submissions: 10",
        "max_submissions_per_day: 0\n  max_submissions: 0",
    ).replace(
        "start: 1-1-2026 # Month/Day/Year\n  end: 8-7-2026", "start: 1-1-2026\n  end: 1-1-2099"
    )
    assert "max_submissions_per_day: 0" in config
    response = import_bundle(client, host, make_zip(codabench_files(config)), slug="iris")
    assert response.status_code == 201, response.text
    body = response.json()
    final = body["phases"][1]
    assert final["end"] is None
    assert final["daily_submission_limit"] == NO_DAILY_LIMIT
    assert final["total_submission_limit"] is None
    text = "\n".join(body["warnings"])
    assert "max_submissions_per_day 0 is no daily limit on Codabench" in text
    assert "phase 'final' has no end" in text and "podium competitions phase iris final" in text
    published = _publish(client, host, "iris")
    assert published.status_code == 200, published.text
    assert published.json()["status"] == "published"


def test_an_evalai_test_phase_starting_before_its_dev_phase_publishes_unedited(
    client: TestClient, host: Caller
) -> None:
    response = import_bundle(client, host, make_zip(evalai_files()), slug="rng")
    assert response.status_code == 201, response.text
    phases = {p["name"]: p for p in response.json()["phases"]}
    assert phases["test"]["start"] < phases["dev"]["start"]
    assert any("phase 'test' starts before phase 'dev'" in w for w in response.json()["warnings"])
    published = _publish(client, host, "rng")
    assert published.status_code == 200, published.text


def test_a_past_codalab_bundle_publishes_as_ended_or_starts_now_when_asked(
    client: TestClient, host: Caller, alice: Caller
) -> None:
    assert "start_date: 2013-06-30" in CODALAB_CONFIG
    bundle = make_zip(codalab_files())
    kept = import_bundle(client, host, bundle, slug="pi-then")
    assert kept.status_code == 201, kept.text
    assert kept.json()["phases"][0]["start"].startswith("2013-06-30")
    assert any("--start-now" in w for w in kept.json()["warnings"])
    assert _publish(client, host, "pi-then").status_code == 200
    shown = client.get(f"{API}/competitions/pi-then", headers=alice.headers).json()
    assert [p["state"] for p in shown["phases"]] == ["ended", "ended"]

    before = datetime.now(UTC) - timedelta(seconds=5)
    moved = import_bundle(client, host, bundle, slug="pi-now", start_now=True)
    assert moved.status_code == 201, moved.text
    dev, final = moved.json()["phases"]
    start = datetime.fromisoformat(dev["start"])
    assert before <= start <= datetime.now(UTC)
    # One offset for every date: the gaps between them stay as the bundle has them.
    then = kept.json()["phases"]
    gap = datetime.fromisoformat(final["start"]) - start
    assert gap == datetime.fromisoformat(then[1]["start"]) - datetime.fromisoformat(
        then[0]["start"]
    )
    assert dev["state"] == "open"
    assert _publish(client, host, "pi-now").status_code == 200


def test_a_codalab_phase_with_a_zero_daily_quota_takes_no_upload_of_its_own(
    client: TestClient, host: Caller, alice: Caller
) -> None:
    config = CODALAB_CONFIG.replace("max_submissions_per_day: 5", "max_submissions_per_day: 0")
    response = import_bundle(
        client, host, make_zip(codalab_files(config)), slug="pi-zero", start_now=True
    )
    assert response.status_code == 201, response.text
    assert response.json()["phases"][0]["daily_submission_limit"] == 0
    assert any("takes no submissions of its own" in w for w in response.json()["warnings"])
    assert _publish(client, host, "pi-zero").status_code == 200
    accept_rules(client, alice, "pi-zero")  # the bundle's terms page is the rules (issue 40)
    refused = client.post(
        f"{API}/competitions/pi-zero/submissions",
        files={"file": ("r.zip", make_zip({"answer.txt": "3.14"}), "application/zip")},
        data={"phase": "development"},
        headers=alice.headers,
    )
    assert refused.status_code == 429, refused.text
    assert "takes no submissions of its own" in refused.json()["detail"]


def test_a_phase_end_is_cleared_and_set_again_through_the_api(
    client: TestClient, host: Caller, alice: Caller
) -> None:
    assert import_bundle(client, host, make_zip(codalab_files()), slug="pi").status_code == 201
    url = f"{API}/competitions/pi/phases/final"
    # A draft is hidden from everyone but its hosts: another user finds nothing to change.
    assert client.patch(url, json={"end": None}, headers=alice.headers).status_code == 404
    cleared = client.patch(url, json={"end": None}, headers=host.headers)
    assert cleared.status_code == 200 and cleared.json()["end"] is None
    assert client.get(f"{API}/competitions/pi", headers=host.headers).json()["deadline"] is None
    later = client.patch(url, json={"end": "2031-01-01"}, headers=host.headers)
    assert later.status_code == 200 and later.json()["end"].startswith("2031-01-01T23:59:59")
