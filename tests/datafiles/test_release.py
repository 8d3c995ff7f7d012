"""A data file's release: public now, hidden (code runs only), or public from a phase's start."""

from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from app.models import AuditEntry, Phase
from tests.helpers import API, create_competition

NOW = datetime.now(UTC)
PHASES = [
    {
        "name": "dev",
        "start": (NOW - timedelta(days=2)).isoformat(),
        "end": (NOW + timedelta(days=5)).isoformat(),
    },
    {
        "name": "final",
        "start": (NOW + timedelta(days=5)).isoformat(),
        "end": (NOW + timedelta(days=9)).isoformat(),
    },
]


def _url(name: str = "") -> str:
    return f"{API}/competitions/term/files" + (f"/{name}" if name else "")


def _phased(client, host) -> None:  # type: ignore[no-untyped-def]
    create_competition(client, host.headers, "term", phases=PHASES)


def test_a_file_released_with_a_phase_appears_when_the_phase_starts(
    client, host, alice, session_factory
):
    _phased(client, host)
    put = client.put(
        _url("final_test.csv") + "?release_with=final", content=b"id\n1\n", headers=host.headers
    )
    assert put.status_code == 201, put.text
    assert put.json()["release_with"] == "final"
    assert put.json()["releases_at"].startswith(PHASES[1]["start"][:16])
    client.put(_url("train.csv"), content=b"id,y\n1,0\n", headers=host.headers)

    # Before the final phase: the participant sees the train file only; the held one is a 404.
    assert [f["name"] for f in client.get(_url(), headers=alice.headers).json()] == ["train.csv"]
    assert client.get(_url("final_test.csv"), headers=alice.headers).status_code == 404
    # The hosts see both, and when the held one comes.
    hosted = {f["name"]: f for f in client.get(_url(), headers=host.headers).json()}
    assert hosted["final_test.csv"]["release_with"] == "final"

    with session_factory() as session:
        session.execute(
            update(Phase).where(Phase.name == "final").values(start=NOW - timedelta(minutes=1))
        )
        session.commit()
    listed = [f["name"] for f in client.get(_url(), headers=alice.headers).json()]
    assert listed == ["final_test.csv", "train.csv"]
    assert client.get(_url("final_test.csv"), headers=alice.headers).content == b"id\n1\n"


def test_multipart_release_with_and_an_unknown_phase_is_a_422_naming_the_phases(client, host):
    _phased(client, host)
    good = client.put(
        _url("t.csv"),
        files={"file": ("t.csv", b"id\n1\n")},
        data={"release_with": "final"},
        headers=host.headers,
    )
    assert good.status_code == 201 and good.json()["release_with"] == "final"
    bad = client.put(_url("u.csv") + "?release_with=nope", content=b"x\n", headers=host.headers)
    assert bad.status_code == 422
    assert bad.json()["field"] == "release_with"
    assert "dev, final" in bad.json()["detail"]
    hidden = client.put(
        _url("u.csv") + "?release_with=final&visibility=hidden",
        content=b"x\n",
        headers=host.headers,
    )
    assert hidden.status_code == 422 and "never released" in hidden.json()["detail"]


def test_a_host_changes_a_files_release_without_sending_it_again(
    client, host, alice, bob, make_user, session_factory
):
    _phased(client, host)
    client.put(_url("t.csv"), content=b"id\n1\n", headers=host.headers)
    held = client.patch(_url("t.csv"), json={"release_with": "final"}, headers=host.headers)
    assert held.status_code == 200, held.text
    assert held.json()["visibility"] == "public" and held.json()["release_with"] == "final"
    assert client.get(_url(), headers=alice.headers).json() == []

    hidden = client.patch(_url("t.csv"), json={"visibility": "hidden"}, headers=host.headers)
    assert hidden.json()["visibility"] == "hidden" and hidden.json()["release_with"] is None
    public = client.patch(_url("t.csv"), json={"visibility": "public"}, headers=host.headers)
    assert public.json()["release_with"] is None
    assert [f["name"] for f in client.get(_url(), headers=alice.headers).json()] == ["t.csv"]

    # The wrong users: a participant, another competition's host, no token.
    other = make_user("other-host", organiser=True)
    create_competition(client, other.headers, "elsewhere")
    for headers in (alice.headers, other.headers):
        refused = client.patch(_url("t.csv"), json={"visibility": "hidden"}, headers=headers)
        assert refused.status_code == 403
    assert client.patch(_url("t.csv"), json={"visibility": "hidden"}).status_code == 401
    assert (
        client.patch(_url("t.csv"), json={"colour": "red"}, headers=host.headers).status_code == 422
    )
    with session_factory() as session:
        actions = session.scalars(
            select(AuditEntry.action).where(AuditEntry.action == "data_file_release")
        ).all()
    assert len(actions) == 3


KAGGLE = f"{API}/competitions.CompetitionApiService"


def _kaggle(client, method: str, body: dict, caller):  # type: ignore[no-untyped-def,type-arg]
    return client.post(
        f"{KAGGLE}/{method}", json=body, headers=caller.headers, follow_redirects=False
    )


def test_a_held_file_is_in_no_kaggle_list_bundle_or_link_until_its_phase(
    client, host, alice, session_factory
):
    import io
    import zipfile

    _phased(client, host)
    client.put(_url("train.csv"), content=b"id\na\n", headers=host.headers)
    link = _kaggle(
        client, "DownloadDataFile", {"competitionName": "term", "fileName": "train.csv"}, alice
    ).headers["location"]
    client.put(_url("final.csv") + "?release_with=final", content=b"id\nq\n", headers=host.headers)
    listed = _kaggle(client, "ListDataFiles", {"competitionName": "term"}, alice).json()
    assert [f["name"] for f in listed["files"]] == ["train.csv"]
    one = _kaggle(
        client, "DownloadDataFile", {"competitionName": "term", "fileName": "final.csv"}, alice
    )
    assert one.status_code == 404
    bundle = _kaggle(client, "DownloadDataFiles", {"competitionName": "term"}, alice)
    archive = zipfile.ZipFile(io.BytesIO(client.get(bundle.headers["location"]).content))
    assert archive.namelist() == ["train.csv"]
    # A link made while a file was public stops once a host holds it back for a phase.
    assert client.get(link).status_code == 200
    held = client.patch(_url("train.csv"), json={"release_with": "final"}, headers=host.headers)
    assert held.status_code == 200
    assert client.get(link).status_code == 404
    # The host's bundle holds everything.
    hosted = _kaggle(client, "DownloadDataFiles", {"competitionName": "term"}, host)
    archive = zipfile.ZipFile(io.BytesIO(client.get(hosted.headers["location"]).content))
    assert sorted(archive.namelist()) == ["final.csv", "train.csv"]
