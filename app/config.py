"""Runtime settings, read once from the environment (prefix ``PODIUM_``) or a ``.env`` file."""

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_SECRET_KEY = "change-me-podium-development-secret"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PODIUM_", env_file=".env", extra="ignore")

    env: Literal["development", "test", "production"] = "development"
    database_url: str = "sqlite:///./.podium/podium.db"
    data_dir: Path = Path(".podium/data")
    secret_key: str = DEFAULT_SECRET_KEY

    # "thread": a scoring thread inside the server process (the embedded default);
    # "eager": score inside the request's commit hook (tests, one-shot tools);
    # "celery": hand the submission id to Celery workers.
    scoring_backend: Literal["thread", "eager", "celery"] = "thread"
    celery_broker_url: str = "redis://127.0.0.1:6379/0"
    # A submission stuck in "scoring" longer than this is assumed orphaned by a dead worker.
    stale_scoring_seconds: int = 600

    # Limits for an organiser's custom metric, which runs in a child process per submission.
    custom_metric_timeout_seconds: float = 300.0
    custom_metric_memory_bytes: int = 4 * 1024 * 1024 * 1024
    # Development only, refused in production: where the bubblewrap jail cannot start, run
    # custom metrics without it (as the server's user, seeing what it sees) instead of refusing.
    custom_metric_unjailed: bool = False
    # A submission larger than this (a compressed one by its unpacked size) is scored in a child
    # process, so the memory its parsing takes returns to the system when the job ends.
    scoring_in_child_bytes: int = 64 * 1024 * 1024

    # The address clients reach this server at, when a reverse proxy changes it (used for the
    # upload and download links handed to the official kaggle client); default: the request's.
    public_url: str | None = None

    max_upload_bytes: int = 512 * 1024 * 1024
    max_rows: int = 50_000_000
    max_decompressed_bytes: int = 4 * 1024 * 1024 * 1024
    # A competition data file (train / test sets) may be as large as this.
    max_data_file_bytes: int = 50 * 1024 * 1024 * 1024

    @model_validator(mode="after")
    def _refuse_default_secret_in_production(self) -> "Settings":
        if self.env == "production" and self.secret_key == DEFAULT_SECRET_KEY:
            raise ValueError(
                "PODIUM_SECRET_KEY must be set to a private value when PODIUM_ENV=production"
            )
        return self

    @model_validator(mode="after")
    def _refuse_unjailed_metrics_in_production(self) -> "Settings":
        if self.env == "production" and self.custom_metric_unjailed:
            raise ValueError(
                "PODIUM_CUSTOM_METRIC_UNJAILED is for development only; it is refused when "
                "PODIUM_ENV=production (install bubblewrap instead)"
            )
        return self

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


@lru_cache
def get_settings() -> Settings:
    return Settings()
