"""Runtime settings, read once from the environment (prefix ``PODIUM_``) or a ``.env`` file."""

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_SECRET_KEY = "change-me-podium-development-secret"
# Token and session hashes, CSRF tokens and signed download links are keyed with the secret: a
# short one could be guessed offline from any of them.
MIN_SECRET_KEY_LENGTH = 32
DEFAULT_DATABASE_URL = "sqlite:///./.podium/podium.db"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PODIUM_", env_file=".env", extra="ignore")

    env: Literal["development", "test", "production"] = "development"
    database_url: str = DEFAULT_DATABASE_URL
    data_dir: Path = Path(".podium/data")
    secret_key: str = DEFAULT_SECRET_KEY

    # Where answer keys, data files and submissions live: "local" (under data_dir) or "s3" (any
    # S3-compatible store; the bucket mirrors data_dir's layout). Credentials left unset fall back
    # to boto3's own chain (AWS_* variables, an instance profile). With "s3", scorers fetch what
    # they parse into data_dir/store-cache, kept under storage_cache_bytes.
    storage: Literal["local", "s3"] = "local"
    s3_bucket: str = "podium"
    s3_endpoint_url: str | None = None
    s3_region: str = "us-east-1"
    s3_access_key_id: str | None = None
    s3_secret_access_key: str | None = None
    # Uploads larger than one part go up as a multipart upload, one part in memory at a time.
    s3_part_bytes: int = Field(default=8 * 1024 * 1024, ge=5 * 1024 * 1024)
    storage_cache_bytes: int = 10 * 1024 * 1024 * 1024
    # Bootstrap resample matrices too large to keep in memory (1 GB per split at 1M rows) are
    # written once per machine into data_dir/resample-cache, kept under this budget.
    resample_cache_bytes: int = 8 * 1024 * 1024 * 1024
    # A board's rank bands are recomputed at most this often per key version and process: each
    # refresh reads every ranked team's replicates (40 MB at 5,000 teams), so a burst of scores
    # that move the board is folded into one refresh at the end of the interval. 0: after each.
    bands_every_seconds: float = 2.0

    # "thread": a scoring thread inside the server process (the embedded default);
    # "eager": score inside the request's commit hook (tests, one-shot tools);
    # "celery": hand the submission id to Celery workers.
    scoring_backend: Literal["thread", "eager", "celery"] = "thread"
    # The embedded scoring thread takes up to this many uploads waiting in its queue at once,
    # claimed in one transaction and settled in one (1: each on its own).
    scoring_batch: int = Field(default=32, ge=1, le=1000)
    celery_broker_url: str = "redis://127.0.0.1:6379/0"
    # Scoring leases: a scorer holds a submission this long and renews it while it scores; the
    # sweep (every sweep_interval_seconds) hands out again what no scorer holds, a queued one
    # once it has waited sweep_grace_seconds for its delivery; after scoring_max_attempts a
    # submission fails (refunded). A competition may set its own time limit per job.
    scoring_lease_seconds: float = 60.0
    scoring_max_attempts: int = 3
    scoring_time_limit_seconds: float = 600.0
    sweep_interval_seconds: float = 30.0
    sweep_grace_seconds: float = 120.0
    # Worker processes: how many per `podium worker`, and where each serves its /metrics.
    worker_concurrency: int = 1
    worker_metrics_port: int | None = None

    # Logs: "text" or one JSON object a line ("json"); every line carries the request id.
    log_format: Literal["text", "json"] = "text"
    log_level: str = "INFO"

    # Limits for an organiser's custom metric, which runs in a child process per submission.
    custom_metric_timeout_seconds: float = 300.0
    custom_metric_memory_bytes: int = 4 * 1024 * 1024 * 1024
    # Processes and threads one custom metric may run at once (a fork bomb stops here).
    custom_metric_max_processes: int = Field(default=256, ge=8)
    # Development only, refused in production: where the bubblewrap jail cannot start, run
    # custom metrics without it (as the server's user, seeing what it sees) instead of refusing.
    custom_metric_unjailed: bool = False
    # A submission larger than this (a compressed one by its unpacked size) is scored in a child
    # process, so the memory its parsing takes returns to the system when the job ends.
    scoring_in_child_bytes: int = 64 * 1024 * 1024

    # Where the API processes share the limits that span requests (failed sign-ins, the upload
    # rate), e.g. redis://127.0.0.1:6379/1. Unset: on PostgreSQL, the sign-in counters are kept in
    # the database; on SQLite (one process), in memory. When Redis stops answering, each process
    # counts in its own memory until it answers again, and /readyz says "degraded" (app.shared).
    redis_url: str | None = None

    # `podium serve`: API processes, and the reverse proxies whose X-Forwarded-For / -Proto are
    # believed (comma-separated addresses or networks, or *): the client's address there is what
    # the sign-in throttle counts and the logs show.
    workers: int = Field(default=1, ge=1)
    proxy_headers: bool = True
    forwarded_allow_ips: str = "127.0.0.1,::1"

    # The address clients reach this server at, when a reverse proxy changes it (used for the
    # upload and download links handed to the official kaggle client); default: the request's.
    public_url: str | None = None

    # The record's Ed25519 signing key (receipts, chain heads), as the base64 of its 32-byte
    # seed; unset: one is generated once into data_dir/ledger/ed25519.key and kept there.
    ledger_signing_key: str | None = None

    # Scheduled backups (app.backup.schedule): where to (a folder or s3://bucket/prefix), every
    # how many hours, and how many to keep there; unset: none (``podium backup`` from cron).
    # One process of the install takes each under a lease.
    backup_to: str | None = None
    backup_every_hours: float = Field(default=24.0, gt=0)
    backup_keep: int | None = Field(default=7, ge=1)

    # Budgets of every uploaded file, enforced while it is read (README, "Threat model").
    max_upload_bytes: int = 512 * 1024 * 1024
    max_rows: int = 50_000_000
    max_decompressed_bytes: int = 4 * 1024 * 1024 * 1024
    max_line_bytes: int = 1024 * 1024
    max_columns: int = 10_000
    # Every other request body (JSON, web forms, kaggle calls) may be this large; and every body
    # must arrive within body_timeout_seconds (a small one whole, an upload between two pieces),
    # else 408: no client holds anything while it sends slowly (app/http/body_gate.py).
    max_request_bytes: int = Field(default=1024 * 1024, ge=64 * 1024)
    body_timeout_seconds: float = Field(default=30.0, gt=0)
    # Uploads a team may make per minute (429 with Retry-After beyond). One refused at intake
    # (its file's format, header, ids or values) is not counted, up to refused_uploads_per_minute
    # of them: past that ceiling refused ones count too, so a flood of bad files still ends.
    uploads_per_minute: int = 10
    refused_uploads_per_minute: int = Field(default=60, ge=0)
    # Board reads (pages, CSV, the kaggle client's leaderboard) run side by side, from the
    # rendered cache or one SQL statement; past board_concurrency of them in flight in one
    # process (real overload), a board read is answered 503 with Retry-After at once.
    board_concurrency: int = Field(default=256, ge=1)
    # Failed sign-ins in a window (app.auth.throttle): per client address and credential tried
    # (a token, or a user name's password), then that credential is answered 429 from there;
    # per address, then its wrong guesses are 429 (right tokens still get in); per account, then
    # its password sign-in is 429 from everywhere (its tokens still work). At most
    # auth_failure_keys keys of each kind are remembered.
    auth_failures_per_window: int = Field(default=20, ge=1)
    auth_failures_per_address: int = Field(default=200, ge=1)
    auth_failures_per_account: int = Field(default=50, ge=1)
    auth_failure_window_seconds: float = Field(default=300.0, gt=0)
    auth_failure_keys: int = Field(default=10_000, ge=1)
    # A competition bundle (app.bundles) uploaded for import, and what it may unpack to in all
    # (zips inside it included); it is read into memory, so both stay well below the RAM.
    bundle_max_bytes: int = Field(default=256 * 1024 * 1024, ge=1024)
    bundle_max_unpacked_bytes: int = Field(default=512 * 1024 * 1024, ge=1024)
    # An imported scoring program's run in the jail (app.programs): its wall clock (a bundle's
    # own execution_time_limit applies up to it), its memory, its CPUs, and its writable output
    # folder (held in memory).
    program_wall_seconds: float = Field(default=600.0, gt=0)
    program_memory_mb: int = Field(default=2048, ge=256)
    program_cpus: float = Field(default=1.0, gt=0)
    program_output_mb: int = Field(default=64, ge=1)
    # A competition data file (train / test sets) may be as large as this.
    max_data_file_bytes: int = 50 * 1024 * 1024 * 1024

    # Code competitions: the most a phase's code_limits may ask for one run (its wall clock, its
    # memory, its CPUs, its writable /kaggle/working, which is held in memory), the largest code
    # upload (a script, a notebook or a zip), and how many runs one worker runs at once.
    code_max_wall_seconds: float = Field(default=3600.0, gt=0)
    code_max_memory_mb: int = Field(default=8192, ge=64)
    code_max_cpus: float = Field(default=2.0, gt=0)
    code_max_working_mb: int = Field(default=4096, ge=1)
    code_max_bytes: int = Field(default=20 * 1024 * 1024, ge=1024)
    code_concurrency: int = Field(default=1, ge=1)

    # Who may make an account (docs/accounts.md): "open" (anyone), "domains" (addresses in
    # signup_domains only, comma-separated, e.g. "uni.edu,lab.org"), "invite" (with an admin's
    # invitation link only) or "closed" (admins make accounts). The sign-up page, the API and
    # single sign-on obey the same mode.
    signup: Literal["open", "domains", "invite", "closed"] = "open"
    signup_domains: str = ""
    # Outgoing mail: smtp://user:password@host:587 (STARTTLS when offered; ?starttls=required
    # insists) or smtps://…:465. Unset: every mail is written to data_dir/outbox (`podium mail
    # outbox` lists them), so a laptop needs no mail server.
    smtp_url: str | None = None
    smtp_from: str = "Podium <podium@localhost>"
    # Whether this API process runs a mail sender (a thread; several processes share the work
    # under leases). Off: `podium mail send` (e.g. from cron) delivers instead.
    send_mail: bool = True
    # Bounds on what strangers can make the server keep: mails waiting to leave (beyond, a request
    # that would send one is 429), accounts not yet verified (beyond, sign-up pauses), and
    # sign-ups, reset and verification requests per client address and hour (a class behind one
    # campus address signs up together: 200), mails to one recipient an hour.
    mail_max_pending: int = Field(default=10_000, ge=1)
    signup_max_unverified: int = Field(default=20_000, ge=1)
    signups_per_address_hour: int = Field(default=200, ge=1)
    mails_per_recipient_hour: int = Field(default=5, ge=1)
    # Single sign-on: a JSON list of OpenID Connect providers, each {"name", "title", "issuer",
    # "client_id", "client_secret"} (docs/accounts.md has Keycloak and Google examples).
    oidc_providers: str = "[]"
    # Webhooks (app.webhooks): deliveries go to public addresses only unless this is true (a
    # private network's receiver, a test's on loopback); each attempt has this many seconds; an
    # endpoint whose attempts failed this many times in a row is disabled and its hosts told.
    webhook_allow_private: bool = False
    webhook_timeout_seconds: float = Field(default=5.0, gt=0, le=30)
    webhook_disable_after: int = Field(default=30, ge=1)
    # Announcements a competition may send per day (each is mailed to its participants).
    announcements_per_day: int = Field(default=5, ge=1)
    # Whether this API process runs the events thread (the time sweep, notifications, webhook
    # deliveries); several processes share the work. Off: `podium events run` does it.
    process_events: bool = True

    @model_validator(mode="after")
    def _refuse_default_secret_in_production(self) -> "Settings":
        if self.env == "production" and self.secret_key == DEFAULT_SECRET_KEY:
            raise ValueError(
                "PODIUM_SECRET_KEY must be set to a private value of at least "
                f"{MIN_SECRET_KEY_LENGTH} characters when PODIUM_ENV=production; "
                "generate one with: python -c 'import secrets; print(secrets.token_urlsafe(48))'"
            )
        if self.env == "production" and len(self.secret_key) < MIN_SECRET_KEY_LENGTH:
            raise ValueError(
                f"PODIUM_SECRET_KEY must be at least {MIN_SECRET_KEY_LENGTH} characters long when "
                f"PODIUM_ENV=production (it has {len(self.secret_key)}); "
                "generate one with: python -c 'import secrets; print(secrets.token_urlsafe(48))'"
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


class SettingsError(ValueError):
    """The environment's settings are refused; the message is one line naming each variable."""


def describe_invalid(exc: ValidationError) -> str:
    """One line for a refused environment: each problem with the variable that causes it."""
    problems = []
    for error in exc.errors():
        message = str(error.get("msg", "")).removeprefix("Value error, ")
        loc = "_".join(str(part) for part in error.get("loc", ()))
        problems.append(f"PODIUM_{loc.upper()}: {message}" if loc else message)
    return " ".join("; ".join(problems).split())


@lru_cache
def get_settings() -> Settings:
    """The process's settings; a refused environment is a :class:`SettingsError` of one line
    (the command line prints it as it is, instead of pydantic's many-line report)."""
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsError(describe_invalid(exc)) from None
