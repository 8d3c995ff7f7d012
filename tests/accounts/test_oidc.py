"""Single sign-on against a real OpenID provider (panva's oidc-provider, run with node): a
person signs in at the provider's own pages, the provider sends the browser back, and Podium
makes or finds the account, links one from /account, or refuses what does not prove who
signed in. The ID token checks run on tokens the provider signed with its own key."""

import base64
import html
import json
import re
import socket
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import links, oidc_client, sso
from app.accounts.oidc_client import SignInRefused
from app.accounts.oidc_settings import OidcProvider
from app.auth.service import create_user, set_password
from app.main import create_app
from app.models import LinkSecret, OidcIdentity, Role, User, UserState
from tests.accounts.oidc_provider import (
    PersonAtProvider,
    RunningProvider,
    login_name,
    now,
    oidc_provider,
)
from tests.asgi_client import TestClient
from tests.conftest import app_settings

BASE = "http://testserver"
PASSWORD = "correct horse battery"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def _client(provider_name: str) -> dict[str, Any]:
    return {
        "client_id": f"podium-{provider_name}",
        "client_secret": f"secret-of-{provider_name}",
        "redirect_uris": [f"{BASE}/signin/oidc/{provider_name}/callback"],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
    }


OTHER_CLIENT = {**_client("elsewhere"), "client_id": "another-site"}


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningProvider]:
    clients = [_client("uni"), _client("link"), OTHER_CLIENT]
    with oidc_provider(tmp_path_factory.mktemp("oidc"), clients) as running:
        yield running


def _entry(running: RunningProvider, name: str, title: str = "Uni Login") -> dict[str, str]:
    client = _client(name)
    return {
        "name": name,
        "title": title,
        "issuer": running.issuer,
        "client_id": client["client_id"],
        "client_secret": client["client_secret"],
    }


class Browser:
    """A browser at Podium (its cookies) with a person at the provider (theirs)."""

    def __init__(self, http: TestClient) -> None:
        self.http = http
        self.person = PersonAtProvider()

    def csrf(self) -> str:
        found = _CSRF.search(self.http.get("/signin").text)
        assert found, "no form on the sign-in page"
        return found.group(1)

    def post(self, path: str, data: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        return self.http.post(
            path, data={"csrf_token": self.csrf(), **(data or {})}, follow_redirects=False
        )

    def set_out(self, path: str):  # type: ignore[no-untyped-def]
        return self.http.get(path, follow_redirects=False)

    def to_provider_and_back(self, started, login: str) -> str:  # type: ignore[no-untyped-def]
        if started.status_code == 200:  # after a form: a page that moves on by itself
            url = started.headers["refresh"].removeprefix("0;url=")
            assert f'href="{html.escape(url)}"' in started.text
        else:
            assert started.status_code == 303, started.text
            url = started.headers["location"]
        back = self.person.authorize(url, login)
        assert back.startswith(f"{BASE}/signin/oidc/"), back
        return back

    def sign_in(self, login: str, *, provider: str = "uni", query: str = ""):  # type: ignore[no-untyped-def]
        back = self.to_provider_and_back(self.set_out(f"/signin/oidc/{provider}{query}"), login)
        return self.http.get(back, follow_redirects=False)

    def signed_in(self) -> bool:
        return self.http.get("/account/tokens", follow_redirects=False).status_code == 200


@pytest.fixture
def make_app(
    tmp_path: Path, provider: RunningProvider, session_factory: sessionmaker[Session]
) -> Iterator[Callable[..., Callable[[], Browser]]]:
    """``make_app(signup=...)`` serves Podium with the provider configured ("uni" and "link")
    and returns a maker of fresh browsers."""
    clients: list[TestClient] = []

    def make(*, providers: list[dict[str, str]] | None = None, **changes: Any):  # type: ignore[no-untyped-def]
        entries = providers or [_entry(provider, "uni"), _entry(provider, "link", "Link Login")]
        settings = app_settings(tmp_path / "data").model_copy(
            update={"oidc_providers": json.dumps(entries), "send_mail": False, **changes}
        )
        first = TestClient(create_app(settings, session_factory=session_factory), base_url=BASE)
        first.__enter__()
        clients.append(first)

        def browser() -> Browser:
            other = TestClient(first.app, base_url=BASE)
            other.portal = first.portal
            return Browser(other)

        return browser

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def _users(session_factory: sessionmaker[Session]) -> list[User]:
    with session_factory() as session:
        return list(session.scalars(select(User).order_by(User.id)))


def _identities(session_factory: sessionmaker[Session]) -> list[OidcIdentity]:
    with session_factory() as session:
        return list(session.scalars(select(OidcIdentity).order_by(OidcIdentity.id)))


def _user(session_factory: sessionmaker[Session], name: str) -> User:
    with session_factory() as session:
        user = session.scalar(select(User).where(User.name == name))
        assert user is not None
        return user


def _make_user(
    session_factory: sessionmaker[Session], name: str, *, email: str | None = None
) -> User:
    with session_factory() as session:
        user, _token = create_user(
            session, name=name, role=Role.participant, secret_key="test-secret-key", email=email
        )
        set_password(user, password=PASSWORD)
        session.commit()
        return user


pytestmark = pytest.mark.slow


# --- Signing in ----------------------------------------------------------------------------


def test_a_first_sign_in_makes_an_account_and_signs_in(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    browser = make_app()()
    login = login_name("ann", email="Ann@Uni.example", email_verified=True, username="ann")

    back = browser.sign_in(login, query="?next=/competitions")

    assert back.status_code == 303, back.text
    assert back.headers["location"] == "/competitions"
    assert browser.signed_in()
    [user] = _users(session_factory)
    assert (user.name, user.email, user.role) == ("ann", "ann@uni.example", Role.participant)
    assert user.email_verified_at is not None and user.may_take_part
    [identity] = _identities(session_factory)
    assert identity.user_id == user.id and identity.provider == "uni"


def test_a_second_sign_in_finds_the_same_account(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    new_browser = make_app()
    login = login_name("bea", email="bea@uni.example", email_verified=True, username="bea")
    assert new_browser().sign_in(login).status_code == 303

    again = new_browser()
    assert again.sign_in(login).status_code == 303

    assert again.signed_in()
    assert [u.name for u in _users(session_factory)] == ["bea"]
    assert len(_identities(session_factory)) == 1


def test_names_are_made_valid_and_unique(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    _make_user(session_factory, "cy")
    browser = make_app()
    assert browser().sign_in(login_name("c1", username="cy")).status_code == 303
    assert browser().sign_in(login_name("c2", username="\u202ecy\u0000 ")).status_code == 303
    assert browser().sign_in(login_name("c3", email="cy@uni.example")).status_code == 303

    assert [u.name for u in _users(session_factory)] == ["cy", "cy-2", "cy-3", "cy-4"]


def test_a_wrong_state_is_refused(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    browser = make_app()()
    back = browser.to_provider_and_back(browser.set_out("/signin/oidc/uni"), login_name("dan"))
    parts = urlsplit(back)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}

    forged = browser.http.get(
        f"/signin/oidc/uni/callback?{urlencode({**query, 'state': 'pdl_' + 'x' * 43})}"
    )
    missing = browser.http.get(f"/signin/oidc/uni/callback?{urlencode({'code': query['code']})}")

    assert forged.status_code == 400 and "Start again" in forged.text
    assert missing.status_code == 400
    assert _users(session_factory) == []


def test_a_callback_carried_to_another_browser_opens_nothing(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    new_browser = make_app()
    attacker = new_browser()
    back = attacker.to_provider_and_back(attacker.set_out("/signin/oidc/uni"), login_name("eve"))

    victim = new_browser()
    answer = victim.http.get(back, follow_redirects=False)

    assert answer.status_code == 400 and "another browser" in answer.text
    assert not victim.signed_in() and _users(session_factory) == []


def test_a_replayed_callback_is_refused(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    browser = make_app()()
    back = browser.to_provider_and_back(browser.set_out("/signin/oidc/uni"), login_name("fay"))
    assert browser.http.get(back, follow_redirects=False).status_code == 303

    replayed = browser.http.get(back, follow_redirects=False)

    assert replayed.status_code == 400 and "used already" in replayed.text
    assert len(_users(session_factory)) == 1


def test_an_unverified_address_is_not_trusted(make_app, session_factory, mails) -> None:  # type: ignore[no-untyped-def]
    _make_user(session_factory, "gus", email="gus@uni.example")
    browser = make_app()()

    back = browser.sign_in(login_name("g1", email="gus@uni.example", email_verified=False))

    assert back.status_code == 303 and browser.signed_in()
    gus, newcomer = _users(session_factory)
    assert newcomer.name == "gus-2"
    assert newcomer.email is None and newcomer.pending_email == "gus@uni.example"
    assert newcomer.must_verify and not newcomer.may_take_part
    assert [i.user_id for i in _identities(session_factory)] == [newcomer.id]
    # The address waits for its own link (whose mail says the address is taken).
    [mail] = mails("gus@uni.example")
    assert "belongs to the account 'gus'" in mail.body


def test_a_matching_address_never_links_silently(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    hal = _make_user(session_factory, "hal", email="hal@uni.example")
    browser = make_app()()

    back = browser.sign_in(login_name("h1", email="hal@uni.example", email_verified=True))

    assert back.status_code == 303
    users = _users(session_factory)
    assert [u.name for u in users] == ["hal", "hal-2"]
    newcomer = users[1]
    assert newcomer.email is None and newcomer.must_verify and not newcomer.may_take_part
    assert [i.user_id for i in _identities(session_factory)] == [newcomer.id]
    assert _user(session_factory, "hal").email == "hal@uni.example" and hal.id != newcomer.id


def test_a_disabled_account_cannot_sign_in(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    new_browser = make_app()
    login = login_name("ida", username="ida")
    assert new_browser().sign_in(login).status_code == 303
    with session_factory() as session:
        session.execute(User.__table__.update().values(state=UserState.disabled))
        session.commit()

    refused = new_browser().sign_in(login)

    assert refused.status_code == 403 and "disabled" in refused.text


def test_a_sign_in_the_person_cancels_at_the_provider_is_refused(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    browser = make_app()()
    started = browser.set_out("/signin/oidc/uni")
    state = parse_qs(urlsplit(started.headers["location"]).query)["state"][0]

    cancelled = browser.http.get(
        f"/signin/oidc/uni/callback?{urlencode({'state': state, 'error': 'access_denied'})}"
    )

    assert cancelled.status_code == 400 and "did not sign you in (access_denied)" in cancelled.text
    assert _users(session_factory) == []


def test_an_unknown_provider_is_404(make_app) -> None:  # type: ignore[no-untyped-def]
    browser = make_app()()

    assert browser.set_out("/signin/oidc/nobody").status_code == 404
    assert browser.http.get("/signin/oidc/nobody/callback?state=x&code=y").status_code == 404


def test_sign_ins_started_from_one_address_are_limited(make_app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sso, "STARTS_PER_ADDRESS", 3)
    browser = make_app()()

    answers = [browser.set_out("/signin/oidc/uni").status_code for _ in range(4)]

    assert answers == [303, 303, 303, 429]


# --- Sign-up modes -------------------------------------------------------------------------


def test_closed_sign_up_makes_no_account_but_known_people_sign_in(
    make_app, session_factory
) -> None:  # type: ignore[no-untyped-def]
    login = login_name("jo", username="jo")
    assert make_app()().sign_in(login).status_code == 303

    closed = make_app(signup="closed")
    refused = closed().sign_in(login_name("kim", username="kim"))
    known = closed().sign_in(login)

    assert refused.status_code == 403 and "sign-up is closed" in refused.text
    assert known.status_code == 303
    assert [u.name for u in _users(session_factory)] == ["jo"]


def test_invite_mode_needs_an_invitation_and_uses_it(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    browser = make_app(signup="invite")
    with session_factory() as session:
        invitation = links.issue(
            session,
            purpose=links.INVITE,
            secret_key="test-secret-key",
            lifetime=timedelta(days=1),
        ).secret
        session.commit()

    without = browser().sign_in(login_name("lee", username="lee"))
    invited = browser().sign_in(
        login_name("lee", username="lee"), query=f"?invitation={invitation}"
    )
    again = browser().sign_in(login_name("max", username="max"), query=f"?invitation={invitation}")

    assert without.status_code == 403 and "invitation" in without.text
    assert invited.status_code == 303
    assert again.status_code == 422  # used up
    assert [u.name for u in _users(session_factory)] == ["lee"]


def test_domains_mode_trusts_only_verified_addresses(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    browser = make_app(signup="domains", signup_domains="uni.example")

    unverified = browser().sign_in(login_name("n1", email="nia@uni.example"))
    verified = browser().sign_in(login_name("n2", email="nia@uni.example", email_verified=True))

    assert unverified.status_code == 403
    assert verified.status_code == 303
    assert [u.email for u in _users(session_factory)] == ["nia@uni.example"]


# --- Linking and unlinking -----------------------------------------------------------------


def _signed_in_with_password(new_browser: Callable[[], Browser], name: str) -> Browser:
    browser = new_browser()
    answer = browser.post("/signin", {"name": name, "password": PASSWORD})
    assert answer.status_code == 303, answer.text
    return browser


def test_a_signed_in_account_links_a_provider_and_signs_in_with_it(
    make_app, session_factory
) -> None:  # type: ignore[no-untyped-def]
    olga = _make_user(session_factory, "olga", email="olga@uni.example")
    new_browser = make_app()
    browser = _signed_in_with_password(new_browser, "olga")
    login = login_name("o1", email="someone-else@uni.example", email_verified=True)

    back = browser.to_provider_and_back(browser.post("/account/sign-ins/link/link"), login)
    linked = browser.http.get(back, follow_redirects=False)

    assert linked.status_code == 303 and linked.headers["location"] == "/account"
    [identity] = _identities(session_factory)
    assert identity.user_id == olga.id and identity.provider == "link"
    anonymous = new_browser()
    assert anonymous.sign_in(login, provider="link").status_code == 303
    assert anonymous.signed_in()
    assert [u.name for u in _users(session_factory)] == ["olga"]


def test_a_link_finished_by_another_account_is_refused(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    _make_user(session_factory, "pam")
    _make_user(session_factory, "quinn")
    new_browser = make_app()
    pam = _signed_in_with_password(new_browser, "pam")
    started = pam.post("/account/sign-ins/link/link")
    back = pam.to_provider_and_back(started, login_name("p1"))
    # Pam's browser now signs in as quinn before the provider's answer arrives.
    assert pam.post("/signin", {"name": "quinn", "password": PASSWORD}).status_code == 303

    refused = pam.http.get(back, follow_redirects=False)

    assert refused.status_code == 400
    assert _identities(session_factory) == []


def test_an_identity_linked_elsewhere_is_not_moved(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    new_browser = make_app()
    login = login_name("r1", username="rae")
    assert new_browser().sign_in(login, provider="link").status_code == 303
    _make_user(session_factory, "sam")
    sam = _signed_in_with_password(new_browser, "sam")

    back = sam.to_provider_and_back(sam.post("/account/sign-ins/link/link"), login)
    refused = sam.http.get(back, follow_redirects=False)

    assert refused.status_code == 409
    assert [i.user_id for i in _identities(session_factory)] == [_user(session_factory, "rae").id]


def test_nobody_unlinks_another_users_identity(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    new_browser = make_app()
    assert new_browser().sign_in(login_name("t1", username="tia")).status_code == 303
    [identity] = _identities(session_factory)
    _make_user(session_factory, "uma")
    uma = _signed_in_with_password(new_browser, "uma")

    refused = uma.post(f"/account/sign-ins/{identity.id}/unlink")
    anonymous = new_browser().post(f"/account/sign-ins/{identity.id}/unlink")

    assert refused.status_code == 303 and refused.headers["location"] == "/account"
    assert "no such linked sign-in" in unquote(refused.cookies["podium_flash"])
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/signin")
    assert len(_identities(session_factory)) == 1


def test_the_last_way_in_is_not_unlinked(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    browser = make_app()()
    assert browser.sign_in(login_name("v1", username="vic")).status_code == 303
    [identity] = _identities(session_factory)

    refused = browser.post(f"/account/sign-ins/{identity.id}/unlink")
    assert refused.status_code == 303 and len(_identities(session_factory)) == 1
    assert "only way to sign in" in unquote(refused.cookies["podium_flash"])

    with session_factory() as session:
        user = session.get(User, identity.user_id)
        assert user is not None
        set_password(user, password=PASSWORD)
        session.commit()
    unlinked = browser.post(f"/account/sign-ins/{identity.id}/unlink")
    assert unlinked.status_code == 303 and _identities(session_factory) == []


# --- A provider that is down ---------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_provider_gets_a_page_that_says_so(make_app, session_factory) -> None:  # type: ignore[no-untyped-def]
    down = {
        "name": "down",
        "title": "Down Login",
        "issuer": f"http://127.0.0.1:{_closed_port()}",
        "client_id": "x",
        "client_secret": "y",
    }
    browser = make_app(providers=[down])()

    page = browser.set_out("/signin/oidc/down")

    assert page.status_code == 502
    assert "Signing in with Down Login is not possible right now" in page.text
    assert session_factory().scalar(select(func.count()).select_from(LinkSecret)) == 0


def test_linking_an_unreachable_provider_says_so_on_the_account_page(
    make_app, session_factory
) -> None:  # type: ignore[no-untyped-def]
    down = {
        "name": "down",
        "title": "Down Login",
        "issuer": f"http://127.0.0.1:{_closed_port()}",
        "client_id": "x",
        "client_secret": "y",
    }
    _make_user(session_factory, "yan")
    yan = _signed_in_with_password(make_app(providers=[down]), "yan")

    answer = yan.post("/account/sign-ins/down/link")

    assert answer.status_code == 303 and answer.headers["location"] == "/account"
    assert "Down Login is not possible right now" in unquote(answer.cookies["podium_flash"])


def test_a_provider_that_goes_down_mid_sign_in_gets_a_page_that_says_so(
    make_app, tmp_path: Path, session_factory
) -> None:  # type: ignore[no-untyped-def]
    with oidc_provider(tmp_path, [_client("brief")]) as brief:
        browser = make_app(providers=[_entry(brief, "brief", "Brief Login")])()
        back = browser.to_provider_and_back(browser.set_out("/signin/oidc/brief"), login_name("w"))
    # The provider has stopped: its token endpoint cannot be reached.

    page = browser.http.get(back, follow_redirects=False)

    assert page.status_code == 502 and "Brief Login" in page.text
    assert _users(session_factory) == []


# --- The ID token's checks, on tokens the provider signed ----------------------------------


@pytest.fixture
def checks(provider: RunningProvider) -> tuple[OidcProvider, oidc_client.Discovery]:
    configured = OidcProvider(**_entry(provider, "uni"))
    return configured, oidc_client.discover(configured)


def _claims(provider: RunningProvider, **changes: Any) -> dict[str, Any]:
    at = now()
    return {
        "iss": provider.issuer,
        "sub": "someone",
        "aud": _client("uni")["client_id"],
        "iat": at,
        "exp": at + 600,
        "nonce": "the-nonce",
        **changes,
    }


def test_an_id_token_from_the_provider_passes_the_checks(provider, checks) -> None:  # type: ignore[no-untyped-def]
    configured, discovery = checks
    login = login_name("x1")
    real = PersonAtProvider().token_for(provider, _client("uni"), login)
    nonce = oidc_client.jwt.decode(real, provider.key).claims["nonce"]

    claims = oidc_client.check_id_token(configured, discovery, id_token=real, nonce=nonce)
    crafted = oidc_client.check_id_token(
        configured, discovery, id_token=provider.sign(_claims(provider)), nonce="the-nonce"
    )

    assert claims["sub"] == login and crafted["sub"] == "someone"


def test_an_id_token_for_another_client_is_refused(provider, checks) -> None:  # type: ignore[no-untyped-def]
    configured, discovery = checks
    theirs = PersonAtProvider().token_for(provider, OTHER_CLIENT, login_name("y1"))
    nonce = oidc_client.jwt.decode(theirs, provider.key).claims["nonce"]

    with pytest.raises(SignInRefused, match="aud"):
        oidc_client.check_id_token(configured, discovery, id_token=theirs, nonce=nonce)


def test_a_replayed_nonce_is_refused(provider, checks) -> None:  # type: ignore[no-untyped-def]
    configured, discovery = checks
    # A real token of an earlier sign-in, presented to a sign-in that sent another nonce.
    earlier = PersonAtProvider().token_for(provider, _client("uni"), login_name("z1"))

    with pytest.raises(SignInRefused, match="nonce"):
        oidc_client.check_id_token(configured, discovery, id_token=earlier, nonce="a-new-nonce")
    with pytest.raises(SignInRefused, match="nonce"):
        no_nonce = {k: v for k, v in _claims(provider).items() if k != "nonce"}
        token = provider.sign(no_nonce)
        oidc_client.check_id_token(configured, discovery, id_token=token, nonce="the-nonce")


def test_an_expired_id_token_is_refused(provider, checks) -> None:  # type: ignore[no-untyped-def]
    configured, discovery = checks
    at = now() - 3600
    expired = provider.sign(_claims(provider, iat=at, exp=at + 600))

    with pytest.raises(SignInRefused, match="exp"):
        oidc_client.check_id_token(configured, discovery, id_token=expired, nonce="the-nonce")


def test_an_id_token_of_another_issuer_or_key_is_refused(provider, checks) -> None:  # type: ignore[no-untyped-def]
    from joserfc import jwt
    from joserfc.jwk import RSAKey

    configured, discovery = checks
    impostor = RSAKey.generate_key(2048, parameters={"kid": "test-key"})
    forged = jwt.encode({"alg": "RS256", "kid": "test-key"}, _claims(provider), impostor)
    unsigned = (
        ".".join(
            base64.urlsafe_b64encode(json.dumps(part).encode()).decode().rstrip("=")
            for part in ({"alg": "none"}, _claims(provider))
        )
        + "."
    )
    elsewhere = provider.sign(_claims(provider, iss="https://idp.example"))

    for token in (forged, unsigned, elsewhere):
        with pytest.raises(SignInRefused):
            oidc_client.check_id_token(configured, discovery, id_token=token, nonce="the-nonce")
