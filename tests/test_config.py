import pytest
from pydantic import ValidationError

from app.config import DEFAULT_SECRET_KEY, Settings


def test_production_refuses_the_default_secret(monkeypatch):
    monkeypatch.delenv("PODIUM_SECRET_KEY", raising=False)
    with pytest.raises(ValidationError, match="PODIUM_SECRET_KEY"):
        Settings(env="production")


def test_production_starts_with_a_private_secret():
    assert Settings(env="production", secret_key="s3cret-" * 6).env == "production"


def test_settings_read_the_podium_prefix(monkeypatch, tmp_path):
    monkeypatch.setenv("PODIUM_DATABASE_URL", "sqlite:////tmp/x.db")
    monkeypatch.setenv("PODIUM_DATA_DIR", str(tmp_path))
    settings = Settings()
    assert settings.database_url == "sqlite:////tmp/x.db"
    assert settings.data_dir == tmp_path
    assert settings.secret_key == DEFAULT_SECRET_KEY and settings.env == "development"
