"""Hosts own their competitions: the owner (creator), the co-hosts the owner adds, and site admins
act as hosts; any other organiser is an ordinary participant there."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Connection, Engine
from sqlalchemy.orm import sessionmaker

from app.auth.service import create_user
from app.config import Settings
from app.main import create_app
from app.models import Role
from tests.asgi_client import TestClient
from tests.conftest import Caller, app_settings
from tests.helpers import (
    API,
    KEY,
    PERFECT,
    PRIVATE_WRONG,
    PUBLIC_HALF,
    ready_competition,
    submit,
)

FUTURE = (datetime.now(UTC) + timedelta(days=7)).isoformat()
SUBMISSION = "{submission}"

# Every host-only route: (method, path, request keyword arguments). The owner gets anything but
# 403 from each (a 409 where the competition is not in a state to do it), everyone else 403.
HOST_ROUTES = [
    ("PATCH", "/competitions/churn", {"json": {"deadline": "2020-01-01T00:00:00Z"}}),
    ("PUT", "/competitions/churn/answer-key", {"files": {"file": ("k.csv", KEY, "text/csv")}}),
    ("GET", "/competitions/churn/answer-key/versions", {}),
    (
        "PUT",
        "/competitions/churn/phases/main/answer-key",
        {"files": {"file": ("k.csv", KEY, "text/csv")}},
    ),
    ("GET", "/competitions/churn/phases/main/answer-key/versions", {}),
    ("PATCH", "/competitions/churn/phases/main", {"json": {"title": "Main"}}),
    # 409 for the hosts: not a simulation phase
    (
        "PUT",
        "/competitions/churn/phases/main/environment",
        {"files": {"file": ("env.zip", b"PK", "application/zip")}},
    ),
    ("POST", "/competitions/churn/phases/main/migrate", {}),
    (
        "PUT",
        "/competitions/churn/custom-metric",
        {
            "files": {"file": ("m.py", b"def score(*a, **k):\n    return 1.0\n", "text/plain")},
            "data": {"direction": "maximize"},
        },
    ),
    ("POST", "/competitions/churn/rescore", {}),
    ("GET", "/competitions/churn/rescore/preview", {}),
    ("POST", "/competitions/churn/rescore/publish", {}),
    ("POST", "/competitions/churn/bans", {"json": {"team": "alice", "reason": "x"}}),
    ("DELETE", "/competitions/churn/bans/alice", {}),
    ("GET", "/competitions/churn/audit", {}),
    ("PUT", "/competitions/churn/files/train.csv", {"content": b"x\n1\n"}),
    ("PATCH", "/competitions/churn/files/train.csv", {"json": {"visibility": "hidden"}}),
    ("DELETE", "/competitions/churn/files/train.csv", {}),
    ("GET", "/competitions/churn/hosts", {}),
    ("POST", "/competitions/churn/hosts", {"json": {"user": "carol"}}),
    ("DELETE", "/competitions/churn/hosts/carol", {}),
    ("POST", f"/submissions/{SUBMISSION}/hide", {"json": {"reason": "x"}}),
    ("DELETE", f"/submissions/{SUBMISSION}/hide", {}),
    ("GET", f"/submissions/{SUBMISSION}/scores", {}),
    ("POST", f"/submissions/{SUBMISSION}/rerun", {}),  # 409 for the hosts: not a code run
    ("GET", "/competitions/churn/checklist", {}),
    ("GET", "/competitions/churn/submissions.csv", {}),
    ("GET", "/competitions/churn/submissions.zip", {}),
    ("GET", "/competitions/churn/export", {}),  # the competition as a bundle
    # 409 for the hosts: a prediction competition has no code to reproduce
    ("POST", "/competitions/churn/reproductions", {"json": {}}),
    ("GET", "/competitions/churn/reproductions", {}),
    ("POST", "/competitions/churn/publish", {}),  # 409 for the hosts: it is not a draft
    # Who takes part (issue 40): the participants list and decisions (alice joined before
    # registrations, so deciding hers is a 404), invitation links, announcements, webhooks.
    ("GET", "/competitions/churn/participants", {}),
    ("GET", "/competitions/churn/participants.csv", {}),
    ("POST", "/competitions/churn/participants/alice/approve", {}),
    ("POST", "/competitions/churn/participants/alice/deny", {}),
    ("POST", "/competitions/churn/participants/approve", {"json": {"names": ["alice"]}}),
    ("POST", "/competitions/churn/participants/deny", {"json": {"names": ["alice"]}}),
    ("POST", "/competitions/churn/invitations", {"json": {}}),
    ("POST", "/competitions/churn/announcements", {"json": {"subject": "s", "body": "b"}}),
    (
        "POST",
        "/competitions/churn/webhooks",
        {"json": {"url": "https://example.org/hook", "events": ["phase.opened"]}},
    ),
    ("GET", "/competitions/churn/webhooks", {}),
    ("GET", "/competitions/churn/webhooks/1/deliveries", {}),
    ("POST", "/competitions/churn/webhooks/1/enable", {}),
    ("DELETE", "/competitions/churn/webhooks/1", {}),
    # The owner's (or an admin's) alone, like changing the hosts; 409 once archived or with
    # submissions.
    ("POST", "/competitions/churn/archive", {}),
    ("DELETE", "/competitions/churn", {}),
]
OWNER_ONLY = {("POST", "/competitions/churn/archive"), ("DELETE", "/competitions/churn")}

# Routes any signed-in caller may use; what they answer depends on who asks (tested below).
OPEN_ROUTES = {
    ("GET", "/me"),
    ("GET", "/runtime"),  # the code runtime's versions, for any signed-in caller
    ("POST", "/competitions"),  # organisers only: creating makes the caller the owner
    ("POST", "/competitions/import"),  # likewise, from a bundle (tests/bundles)
    ("GET", "/competitions"),
    ("GET", "/competitions/{slug}"),
    ("GET", "/competitions/{slug}/sample-submission"),
    ("GET", "/competitions/{slug}/phases"),  # what the competition page shows
    ("GET", "/competitions/{slug}/leaderboard"),  # without a token too (the public board)
    ("GET", "/competitions/{slug}/leaderboard.csv"),
    ("GET", "/competitions/{slug}/compare"),  # hosts any pair; a participant their own team's
    ("GET", "/competitions/{slug}/shakeup"),  # hosts any time; everyone after the deadline
    ("GET", "/auth/tokens"),  # the caller's own tokens only
    ("DELETE", "/auth/tokens/{token_id}"),
    ("POST", "/competitions/{slug}/submissions"),
    ("GET", "/competitions/{slug}/submissions"),
    ("GET", "/competitions/{slug}/quota"),
    ("GET", "/competitions/{slug}/files"),  # participants from the start, hosts always
    ("GET", "/competitions/{slug}/files/{name}"),
    ("GET", "/submissions/{submission_id}"),
    ("GET", "/submissions/{submission_id}/file"),
    ("GET", "/submissions/{submission_id}/log"),  # the team's and the hosts' (code runs)
    ("POST", "/submissions/{submission_id}/select"),
    ("DELETE", "/submissions/{submission_id}/select"),
    ("POST", "/competitions/{slug}/join"),
    ("GET", "/competitions/{slug}/team"),
    ("POST", "/competitions/{slug}/team/invitations"),
    ("DELETE", "/competitions/{slug}/team/invitations/{invitation_id}"),
    ("GET", "/competitions/{slug}/invitations"),
    ("POST", "/invitations/{invitation_id}/accept"),
    ("POST", "/invitations/{invitation_id}/decline"),
    # Simulation episodes: replays anyone's, a seat's log its team's and the hosts' (tested in
    # tests/simulation/test_simulation_phase.py).
    ("GET", "/submissions/{submission_id}/episodes"),
    ("GET", "/episodes/{episode_id}"),
    ("GET", "/episodes/{episode_id}/logs/{agent}"),
    # Who takes part (issue 40): the news, one's own registration and rules, one's own
    # notifications (tests/registration, tests/notifications try them with other users).
    ("GET", "/competitions/{slug}/announcements"),
    ("GET", "/competitions/{slug}/registration"),
    ("POST", "/competitions/{slug}/rules/accept"),
    ("GET", "/me/notifications"),
    ("PUT", "/me/notifications"),
    ("GET", "/me/notifications/recent"),
    # Accounts (issue 39): one's own account, sign-up and its links, and the site admin's
    # routes (admins only: tests/accounts try them with other users); none is a host's.
    ("GET", "/me/account"),
    ("GET", "/me/data"),
    ("POST", "/me/delete"),
    ("POST", "/me/email"),
    ("POST", "/me/email/verification"),
    ("POST", "/me/password"),
    ("POST", "/auth/signup"),
    ("POST", "/auth/verify-email"),
    ("POST", "/auth/password-reset"),
    ("POST", "/auth/password-reset/confirm"),
    ("GET", "/admin/users"),
    ("PATCH", "/admin/users/{name}"),
    ("GET", "/admin/invitations"),
    ("POST", "/admin/invitations"),
    ("DELETE", "/admin/invitations/{invitation_id}"),
    ("GET", "/admin/audit"),
    # The record and its key: anyone, no token (sealed values opened for hosts; tests/ledger).
    ("GET", "/competitions/{slug}/ledger"),
    ("GET", "/ledger/key"),
    # Winners' checks: the submission's team attaches, it and the hosts read (tests/ledger).
    ("PUT", "/competitions/{slug}/submissions/{submission_id}/code"),
    ("GET", "/competitions/{slug}/submissions/{submission_id}/code"),
}


def _template(path: str) -> str:
    return (
        path.replace("churn", "{slug}", 1)
        .replace(SUBMISSION, "{submission_id}")
        .replace("/bans/alice", "/bans/{team}")
        .replace("/hosts/carol", "/hosts/{user_name}")
        .replace("/files/train.csv", "/files/{name}")
        .replace("/phases/main", "/phases/{phase}")
        .replace("/participants/alice/", "/participants/{name}/")
        .replace("/webhooks/1", "/webhooks/{webhook_id}")
    )


def test_every_api_route_is_either_host_only_or_open(client):
    routes = {
        (method.upper(), path.removeprefix(API))
        for path, operations in client.app.openapi()["paths"].items()
        if path.startswith(API)
        for method in operations
    }
    host_only = {(method, _template(path)) for method, path, _ in HOST_ROUTES}
    assert not host_only & OPEN_ROUTES
    assert routes == host_only | OPEN_ROUTES


@dataclass
class Shared:
    connection: Connection
    settings: Settings
    callers: dict[str, Caller]
    submission_id: int


@pytest.fixture(scope="module")
def shared(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    """'churn' hosted by ``host``, with one scored submission by alice (and a user carol), built
    once for the module's 130-odd tests rather than once each. Every test runs in a savepoint of
    this transaction that is rolled back after it (:func:`connection`), and stored files are
    named by their content, so no test sees another's changes."""
    settings = app_settings(tmp_path_factory.mktemp("hosts") / "data")
    with engine.connect() as conn:
        outer = conn.begin()
        factory = sessionmaker(
            bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False
        )
        callers = {}
        with factory() as session:
            for name, role in [("host", Role.organiser), ("alice", Role.participant)]:
                token = create_user(session, name=name, role=role, secret_key=settings.secret_key)
                callers[name] = Caller(name=name, token=token[1])
            create_user(session, name="carol", role=Role.participant, secret_key="unused")
            session.commit()
        with TestClient(create_app(settings, session_factory=factory)) as client:
            ready_competition(client, callers["host"].headers, deadline=FUTURE, score_decimals=2)
            response = submit(client, callers["alice"].headers, PUBLIC_HALF)
            assert response.status_code == 202, response.text
        try:
            yield Shared(conn, settings, callers, response.json()["id"])
        finally:
            outer.rollback()


@pytest.fixture
def connection(shared: Shared) -> Iterator[Connection]:
    savepoint = shared.connection.begin_nested()
    try:
        yield shared.connection
    finally:
        savepoint.rollback()


@pytest.fixture
def settings(shared: Shared) -> Settings:
    return shared.settings


@pytest.fixture
def host(shared: Shared) -> Caller:
    return shared.callers["host"]


@pytest.fixture
def alice(shared: Shared) -> Caller:
    return shared.callers["alice"]


@pytest.fixture
def competition(shared: Shared) -> int:
    """'churn' hosted by ``host``, with one scored submission by alice; returns its id."""
    return shared.submission_id


@pytest.fixture
def other(make_user):
    """An organiser who does not host 'churn'."""
    return make_user("other", organiser=True)


def _call(client, caller, method, path, kwargs, submission_id):
    url = API + path.replace(SUBMISSION, str(submission_id))
    return client.request(method, url, headers=caller.headers, **kwargs)


@pytest.mark.parametrize(("method", "path", "kwargs"), HOST_ROUTES)
def test_host_routes_refuse_a_foreign_organiser_and_a_participant(
    client, host, alice, other, competition, method, path, kwargs
):
    for caller in (other, alice):
        response = _call(client, caller, method, path, kwargs, competition)
        if caller is other and path.startswith("/submissions/"):
            # Another competition's host may not see alice's submission: it answers as a
            # missing one does, so that ids cannot be walked (alice, who may see it, hears 403).
            assert response.status_code == 404, (caller.name, response.text)
            assert response.json()["code"] == "not_found"
            continue
        assert response.status_code == 403, (caller.name, response.text)
        assert "hosts" in response.json()["detail"] or "owner" in response.json()["detail"]
    # Nothing changed: the owner finds the competition as it was, and no audit entry by them.
    details = client.get(f"{API}/competitions/churn", headers=host.headers).json()
    assert datetime.fromisoformat(details["deadline"]) == datetime.fromisoformat(FUTURE)
    audit = client.get(f"{API}/competitions/churn/audit", headers=host.headers).json()
    assert {e["actor"] for e in audit} == {"host"}


@pytest.mark.parametrize(("method", "path", "kwargs"), HOST_ROUTES)
def test_host_routes_answer_a_cohost_an_admin_and_the_owner(
    client, host, make_user, competition, method, path, kwargs
):
    cohost, admin = make_user("cohost"), make_user("root", admin=True)
    added = client.post(f"{API}/competitions/churn/hosts", json={"user": "cohost"}, **_h(host))
    assert added.status_code == 201, added.text
    for caller in (cohost, admin, host):
        response = _call(client, caller, method, path, kwargs, competition)
        changes_hosts = path.startswith("/competitions/churn/hosts") and method != "GET"
        if caller is cohost and (changes_hosts or (method, path) in OWNER_ONLY):
            # Only the owner (or an admin) changes who hosts.
            assert response.status_code == 403, response.text
        else:
            assert response.status_code != 403, (caller.name, response.text)
            assert response.status_code < 500, (caller.name, response.text)


def _h(caller):
    return {"headers": caller.headers}


def test_a_foreign_organiser_sees_only_participant_views(client, host, alice, other, competition):
    assert client.get(f"{API}/submissions/{competition}", **_h(other)).status_code == 404
    assert client.get(f"{API}/submissions/{competition}/file", **_h(other)).status_code == 404
    assert client.get(f"{API}/competitions/churn/submissions", **_h(other)).json() == []
    private = client.get(f"{API}/competitions/churn/leaderboard?board=private", **_h(other))
    assert private.status_code == 403
    board = client.get(f"{API}/competitions/churn/leaderboard", **_h(other)).json()
    assert board["score_decimals"] == 2
    # The host sees the same board at full precision and the private board.
    assert (
        client.get(f"{API}/competitions/churn/leaderboard", **_h(host)).json()["score_decimals"]
        is None
    )
    assert (
        client.get(f"{API}/competitions/churn/leaderboard?board=private", **_h(host)).status_code
        == 200
    )


def test_a_foreign_organiser_competes_as_an_ordinary_participant(
    client, host, alice, other, competition
):
    joined = client.post(f"{API}/competitions/churn/join", **_h(other))
    assert joined.status_code == 201, joined.text
    response = submit(client, other.headers, PRIVATE_WRONG)
    assert response.status_code == 202, response.text
    own = client.get(f"{API}/submissions/{response.json()['id']}", **_h(other)).json()
    assert own["public_score"] == 1.0
    assert "private_score" not in own and "host_error" not in own and "team" not in own
    rows = client.get(f"{API}/competitions/churn/leaderboard", **_h(other)).json()["rows"]
    assert [(r["team"], r["rank"]) for r in rows] == [("other", 1), ("alice", 2)]
    # Their baseline would be a host's privilege.
    baseline = client.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("s.csv", PERFECT, "text/csv")},
        data={"baseline": "true"},
        **_h(other),
    )
    assert baseline.status_code == 403


def test_a_host_cannot_enter_their_own_competition(client, host, alice, competition):
    assert client.post(f"{API}/competitions/churn/join", **_h(host)).status_code == 403
    ranked = submit(client, host.headers, PERFECT)
    assert ranked.status_code == 403 and "baseline" in ranked.json()["detail"]
    baseline = client.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("s.csv", PERFECT, "text/csv")},
        data={"baseline": "true"},
        **_h(host),
    )
    assert baseline.status_code == 202, baseline.text
    rows = client.get(f"{API}/competitions/churn/leaderboard", **_h(alice)).json()["rows"]
    assert [(r["team"], r["rank"], r["baseline"]) for r in rows] == [
        ("Baseline", None, True),  # a baseline is labelled, not a team
        ("alice", 1, False),
    ]
    # The baseline made the host a one-person "team"; it still cannot invite anyone.
    invite = client.post(
        f"{API}/competitions/churn/team/invitations", json={"user": "alice"}, **_h(host)
    )
    assert invite.status_code == 403
    # Nor can a participant invite a host.
    invite = client.post(
        f"{API}/competitions/churn/team/invitations", json={"user": "host"}, **_h(alice)
    )
    assert invite.status_code == 409 and "host" in invite.json()["detail"]


def test_a_host_elsewhere_may_compete_here(client, host, other, competition):
    other_slug = {"slug": "other-comp", "title": "Other", "metric": {"name": "roc_auc"}}
    assert client.post(f"{API}/competitions", json=other_slug, **_h(other)).status_code == 201
    assert client.post(f"{API}/competitions/other-comp/join", **_h(other)).status_code == 403
    assert client.post(f"{API}/competitions/churn/join", **_h(other)).status_code == 201
    assert client.post(f"{API}/competitions/other-comp/join", **_h(host)).status_code == 201


def test_the_owner_adds_and_removes_cohosts_and_the_audit_says_so(
    client, host, alice, make_user, competition
):
    cohost = make_user("dora", organiser=True)
    added = client.post(f"{API}/competitions/churn/hosts", json={"user": "dora"}, **_h(host))
    assert added.status_code == 201 and added.json()["role"] == "cohost"
    listing = client.get(f"{API}/competitions/churn/hosts", **_h(cohost)).json()
    assert [(h["user"], h["role"]) for h in listing] == [("host", "owner"), ("dora", "cohost")]

    # A co-host does host things: sees alice's file and full scores, changes settings.
    assert client.get(f"{API}/submissions/{competition}/file", **_h(cohost)).content == PUBLIC_HALF
    view = client.get(f"{API}/submissions/{competition}", **_h(cohost)).json()
    assert view["team"] == "alice" and "host_error" in view and view["private_score"] == 1.0
    patch = client.patch(f"{API}/competitions/churn", json={"title": "By Dora"}, **_h(cohost))
    assert patch.status_code == 200
    # ... but not change who hosts.
    assert (
        client.post(f"{API}/competitions/churn/hosts", json={"user": "carol"}, **_h(cohost))
    ).status_code == 403
    assert client.delete(f"{API}/competitions/churn/hosts/host", **_h(cohost)).status_code == 403
    assert client.post(f"{API}/competitions/churn/join", **_h(cohost)).status_code == 403

    removed = client.delete(f"{API}/competitions/churn/hosts/dora", **_h(host))
    assert removed.status_code == 204
    assert client.get(f"{API}/submissions/{competition}/file", **_h(cohost)).status_code == 404
    assert client.get(f"{API}/competitions/churn/audit", **_h(cohost)).status_code == 403
    patch = client.patch(f"{API}/competitions/churn", json={"title": "Again"}, **_h(cohost))
    assert patch.status_code == 403
    board = client.get(f"{API}/competitions/churn/leaderboard?board=private", **_h(cohost))
    assert board.status_code == 403

    audit = client.get(f"{API}/competitions/churn/audit", **_h(host)).json()
    changes = [(e["action"], e["actor"], e["target"]) for e in audit if "host" in e["action"]]
    assert changes == [("host_add", "host", "user dora"), ("host_remove", "host", "user dora")]


def test_host_changes_that_make_no_sense_are_refused(client, host, alice, competition):
    url = f"{API}/competitions/churn/hosts"
    assert client.post(url, json={"user": "nobody"}, **_h(host)).status_code == 404
    assert client.post(url, json={"user": "host"}, **_h(host)).status_code == 409
    # Alice competes here (a ranked submission): she cannot become a host.
    refused = client.post(url, json={"user": "alice"}, **_h(host))
    assert refused.status_code == 409 and "competes" in refused.json()["detail"]
    assert client.delete(f"{url}/host", **_h(host)).status_code == 409  # the owner stays
    assert client.delete(f"{url}/carol", **_h(host)).status_code == 404  # not a host
    assert client.post(url, json={"user": ""}, **_h(host)).status_code == 422


def test_an_invitation_sent_before_someone_became_host_cannot_be_accepted(
    client, host, alice, bob, competition
):
    invitation = client.post(
        f"{API}/competitions/churn/team/invitations", json={"user": "bob"}, **_h(alice)
    )
    assert invitation.status_code == 201, invitation.text
    assert (
        client.post(f"{API}/competitions/churn/hosts", json={"user": "bob"}, **_h(host))
    ).status_code == 201
    accepted = client.post(f"{API}/invitations/{invitation.json()['id']}/accept", **_h(bob))
    assert accepted.status_code == 403
    assert client.get(f"{API}/competitions/churn/team", **_h(alice)).json()["members"] == ["alice"]


def test_a_site_admin_acts_on_every_competition(client, host, alice, make_user, competition):
    admin = make_user("root", admin=True)
    view = client.get(f"{API}/submissions/{competition}", **_h(admin)).json()
    assert view["team"] == "alice" and view["private_score"] == 1.0
    ban = client.post(f"{API}/competitions/churn/bans", json={"team": "alice"}, **_h(admin))
    assert ban.status_code == 201
    added = client.post(f"{API}/competitions/churn/hosts", json={"user": "carol"}, **_h(admin))
    assert added.status_code == 201
    # Admins create competitions too, and do not compete.
    body = {"slug": "admins", "title": "Admins", "metric": {"name": "roc_auc"}}
    assert client.post(f"{API}/competitions", json=body, **_h(admin)).status_code == 201
    assert client.post(f"{API}/competitions/churn/join", **_h(admin)).status_code == 403


def test_participants_still_cannot_create_competitions(client, alice):
    body = {"slug": "mine", "title": "Mine", "metric": {"name": "roc_auc"}}
    response = client.post(f"{API}/competitions", json=body, **_h(alice))
    assert response.status_code == 403 and "organisers" in response.json()["detail"]
