"""The OpenID providers' setting (PODIUM_OIDC_PROVIDERS): refused in one line when wrong,
listed for the pages' "Sign in with …" buttons when right."""

import json
from pathlib import Path

import pytest

from app.accounts import sso
from app.config import Settings, SettingsError
from app.main import create_app
from tests.conftest import app_settings


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("{", "not valid JSON"),
        ('{"name": "x"}', "expected a JSON list"),
        (
            '[{"name": "Bad Name", "title": "t", "issuer": "https://a.example", '
            '"client_id": "c", "client_secret": "s"}]',
            "provider 0.name",
        ),
        (
            '[{"name": "a", "title": "t", "issuer": "http://idp.example", '
            '"client_id": "c", "client_secret": "s"}]',
            "must use https://",
        ),
        (
            '[{"name": "a", "title": "t", "issuer": "https://a.example", "client_id": "c"}]',
            "provider 0.client_secret: Field required",
        ),
    ],
)
def test_a_bad_provider_setting_is_refused_in_one_line(raw: str, says: str, tmp_path: Path) -> None:
    settings = app_settings(tmp_path).model_copy(update={"oidc_providers": raw})

    with pytest.raises(SettingsError) as refused:
        create_app(settings)

    assert says in str(refused.value) and "\n" not in str(refused.value)
    assert str(refused.value).startswith("PODIUM_OIDC_PROVIDERS: ")


def test_the_pages_list_the_providers(tmp_path: Path) -> None:
    entries = [
        {
            "name": "kc",
            "title": "Keycloak",
            "issuer": "https://kc.example/realms/uni",
            "client_id": "podium",
            "client_secret": "s",
        },
        {
            "name": "google",
            "title": "Google",
            "issuer": "https://accounts.google.com",
            "client_id": "id",
            "client_secret": "s",
        },
    ]
    settings: Settings = app_settings(tmp_path).model_copy(
        update={"oidc_providers": json.dumps(entries)}
    )

    assert sso.providers_for_pages(settings) == [("kc", "Keycloak"), ("google", "Google")]
    assert sso.providers_for_pages(app_settings(tmp_path)) == []


def test_the_partials_show_a_button_per_provider() -> None:
    from app.web.templating import templates

    providers = [("kc", "Keycloak"), ("google", "Google")]
    buttons = templates.get_template("_sso_buttons.html").render(
        sso_providers=providers, next="/competitions/a b", invitation="pdl_x&y"
    )
    links = templates.get_template("_sso_link_buttons.html").render(
        sso_providers=providers, csrf_token="t0ken"
    )

    assert 'href="/signin/oidc/kc?next=/competitions/a%20b&amp;invitation=pdl_x%26y"' in buttons
    assert "Sign in with Google" in buttons
    assert 'action="/account/sign-ins/google/link"' in links and 'value="t0ken"' in links
    assert templates.get_template("_sso_buttons.html").render().strip() == ""
