import pytest
from pydantic import ValidationError

from app.config import DEFAULT_SECRET_KEY, MIN_SECRET_KEY_LENGTH, Settings


def test_production_refuses_the_default_secret(monkeypatch):
    monkeypatch.delenv("PODIUM_SECRET_KEY", raising=False)
    with pytest.raises(ValidationError, match="PODIUM_SECRET_KEY"):
        Settings(env="production")


def test_production_starts_with_a_private_secret():
    assert Settings(env="production", secret_key="s3cret-" * 6).env == "production"


@pytest.mark.parametrize("length", [1, 16, MIN_SECRET_KEY_LENGTH - 1])
def test_production_refuses_a_short_secret(length):
    with pytest.raises(ValidationError, match=f"at least {MIN_SECRET_KEY_LENGTH} characters"):
        Settings(env="production", secret_key="k" * length)


def test_production_accepts_a_secret_of_the_minimum_length():
    settings = Settings(env="production", secret_key="k" * MIN_SECRET_KEY_LENGTH)
    assert len(settings.secret_key) == MIN_SECRET_KEY_LENGTH


def test_development_and_tests_accept_a_short_secret():
    assert Settings(env="test", secret_key="short").secret_key == "short"
    assert Settings(env="development", secret_key="short").secret_key == "short"


def test_settings_read_the_podium_prefix(monkeypatch, tmp_path):
    monkeypatch.setenv("PODIUM_DATABASE_URL", "sqlite:////tmp/x.db")
    monkeypatch.setenv("PODIUM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("PODIUM_ENV", raising=False)  # the suite sets it for itself (conftest)
    settings = Settings()
    assert settings.database_url == "sqlite:////tmp/x.db"
    assert settings.data_dir == tmp_path
    assert settings.secret_key == DEFAULT_SECRET_KEY and settings.env == "development"
