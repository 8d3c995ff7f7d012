"""Signed-in browsers for the web tests: a TestClient per user, with its own cookies."""

import re
from collections.abc import Callable

import pytest
from sqlalchemy import select

from app.auth.service import set_password
from app.models import User
from tests.asgi_client import TestClient

PASSWORD = "correct horse battery"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


class WebClient:
    """A browser stand-in: keeps cookies, reads the CSRF token off the page it posts from."""

    def __init__(self, client: TestClient) -> None:
        self.http = client

    def get(self, path: str, **kw):  # type: ignore[no-untyped-def]
        return self.http.get(path, **kw)

    def token_on(self, page: str) -> str:
        found = _CSRF.search(self.http.get(page).text)
        assert found, f"no form on {page}"
        return found.group(1)

    def post(self, path: str, *, page: str | None = None, data=None, files=None, **kw):  # type: ignore[no-untyped-def]
        token = self.token_on(page or "/")
        return self.http.post(
            path,
            data={"csrf_token": token, **(data or {})},
            files=files,
            follow_redirects=False,
            **kw,
        )

    def sign_in(self, name: str, password: str = PASSWORD):  # type: ignore[no-untyped-def]
        return self.post("/signin", page="/signin", data={"name": name, "password": password})


@pytest.fixture
def browser(client: TestClient) -> Callable[..., WebClient]:
    """``browser()`` is an anonymous visitor; ``browser("alice")`` is alice, signed in."""

    def make(name: str | None = None) -> WebClient:
        web = WebClient(TestClient(client.app, base_url="http://testserver"))
        if name is not None:
            response = web.sign_in(name)
            assert response.status_code == 303, response.text
        return web

    return make


@pytest.fixture
def with_password(session_factory) -> Callable[[str], None]:  # type: ignore[no-untyped-def]
    def give(name: str) -> None:
        with session_factory() as session:
            user = session.scalar(select(User).where(User.name == name))
            assert user is not None
            set_password(user, password=PASSWORD)
            session.commit()

    return give


@pytest.fixture
def person(make_user, with_password):  # type: ignore[no-untyped-def]
    """A user who can sign in to the pages with ``PASSWORD`` (and call the API with a token)."""

    def make(name: str, *, organiser: bool = False):  # type: ignore[no-untyped-def]
        caller = make_user(name, organiser=organiser)
        with_password(name)
        return caller

    return make
