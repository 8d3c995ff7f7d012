"""The ``podium`` command: run the server, manage users, and score files locally."""

import json
import logging
import os
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from app.jobs.names import CODE_QUEUE, DEFAULT_QUEUE  # a leaf of names: nothing else is loaded

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from sqlalchemy.orm import Session

    from app.config import Settings

app = typer.Typer(
    name="podium",
    help="Podium: a self-hosted evaluation service for machine-learning competitions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
users_app = typer.Typer(help="Manage users and their API tokens.", no_args_is_help=True)
app.add_typer(users_app, name="users")


def _error_line(message: str) -> None:
    # The contract: exactly one line on stderr, never a traceback.
    sys.stderr.write("error: " + " ".join(message.split()) + "\n")


def _fail(message: str) -> NoReturn:
    _error_line(message)
    raise typer.Exit(code=2)


def _open_database(settings: "Settings", *, create: bool = False, may_create: bool = False) -> None:
    """Say on stderr which database this command works on, and refuse one that is not there.

    Only ``serve``, ``migrate`` and an explicit ``--create`` make a database: run from another
    directory, the default relative SQLite path would otherwise leave an empty one behind and
    every user would seem to have vanished. ``may_create``: the command offers ``--create``.
    """
    from app.config import DEFAULT_DATABASE_URL
    from app.db import NoDatabase, check_database, shown_url

    url = settings.database_url
    if not create:
        try:
            check_database(url)
        except NoDatabase as exc:
            if not exc.absent:
                _fail(exc.message)
            relative = " (the default PODIUM_DATABASE_URL, relative to this directory)"
            _fail(
                exc.message
                + (relative if url == DEFAULT_DATABASE_URL else "")
                + "; run `podium migrate` or `podium serve` to create it, "
                + ("pass --create, " if may_create else "")
                + "or set PODIUM_DATABASE_URL to your database"
            )
    sys.stderr.write(f"database: {shown_url(url)}\n")


def _require_celery(command: str) -> None:
    # Celery is the scale extra, not a base dependency: name the install, not the import.
    try:
        import celery  # noqa: F401
    except ImportError:
        _fail(
            f"`podium {command}` needs Celery, which is not installed; install the scale extra: "
            "pip install 'podium[scale]' (in a checkout: .venv/bin/pip install -e '.[scale]')"
        )


@app.command()
def score(
    answer_key: Annotated[Path, typer.Argument(help="The answer key CSV.")],
    submission: Annotated[Path, typer.Argument(help="The submission CSV.")],
    metric: Annotated[str, typer.Option("--metric", help="Metric name (see `podium metrics`).")],
    params: Annotated[str | None, typer.Option(help="Metric params as a JSON object.")] = None,
    id_column: Annotated[
        str | None, typer.Option("--id-column", help="Id column (default: the key's first).")
    ] = None,
    details: Annotated[bool, typer.Option("--details", help="Add the metric's details.")] = False,
    labels: Annotated[
        str | None,
        typer.Option(
            "--labels",
            help="The label set, as a JSON list or comma-separated; a label outside it is an "
            "error (single-label metrics; default: the labels found in the files).",
        ),
    ] = None,
) -> None:
    """Score SUBMISSION against ANSWER_KEY and print one JSON object."""
    from app.config import get_settings
    from app.evaluation.keys import intake_limits
    from app.metrics import MetricParamsError, UnknownMetric
    from app.scoring.core import ScoringError, score_files
    from app.scoring.intake_labels import parse_label_list

    parsed: dict[str, Any] = {}
    if params:
        try:
            parsed = json.loads(params)
        except json.JSONDecodeError as exc:
            _fail(f"--params is not valid JSON: {exc.msg} at character {exc.pos}")
        if not isinstance(parsed, dict):
            _fail("--params must be a JSON object")
    label_set = None
    if labels is not None:
        try:
            label_set = parse_label_list(labels)
        except ValueError as exc:
            _fail(f"--labels: {exc}")
    for label, path in (("answer key", answer_key), ("submission", submission)):
        if not path.is_file():
            _fail(f"{label} file not found: {path}")
    limits = intake_limits(get_settings())
    if _has_usage_column(submission, limits):
        _fail(
            f"the submission {submission} has a 'Usage' column, which only an answer key has: "
            "the files look swapped; give the answer key first, then the submission"
        )
    try:
        result = score_files(
            metric_name=metric,
            params=parsed,
            answer_key=answer_key,
            submission=submission,
            id_column=id_column,
            details=details,
            limits=limits,
            labels=label_set,
        )
    except (UnknownMetric, MetricParamsError) as exc:
        _fail(str(exc))
    except ScoringError as exc:
        where = {"answer_key": "answer key: ", "submission": "submission: "}.get(exc.source, "")
        _fail(f"{where}{exc.message}")
    except Exception as exc:  # noqa: BLE001 - the contract forbids tracebacks
        _fail(f"unexpected failure: {type(exc).__name__}: {exc}")
    typer.echo(json.dumps(result.as_json(metric)))


def _has_usage_column(path: Path, limits: Any) -> bool:
    from app.scoring.intake import USAGE_COLUMN, IntakeError, read_header

    try:
        return USAGE_COLUMN in read_header(path, limits=limits)
    except IntakeError:
        return False  # scoring names what is wrong with the file


@app.command()
def metrics(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the metric catalogue: name, direction, params and expected columns."""
    from app.metrics import all_metrics

    entries = []
    for m in all_metrics():
        params = [
            {
                "name": name,
                "required": field.is_required(),
                "default": None if field.is_required() else field.get_default(),
            }
            for name, field in m.params.model_fields.items()
        ]
        entries.append(
            {
                "name": m.name,
                "direction": m.direction,
                "params": params,
                "columns": m.expected_columns(),
                "reference": m.reference,
            }
        )
    if as_json:
        typer.echo(json.dumps(entries, indent=2))
        return
    for e in entries:
        params = (
            ", ".join(
                f"{p['name']} (required)" if p["required"] else f"{p['name']}={p['default']!r}"
                for p in e["params"]
            )
            or "-"
        )
        typer.echo(f"{e['name']:<34} {e['direction']:<9} params: {params}")
        typer.echo(f"{'':<34} columns: {e['columns']}")


@app.command()
def migrate() -> None:
    """Apply pending database migrations."""
    from app.config import get_settings
    from app.db import shown_url
    from app.migrate import upgrade

    url = get_settings().database_url
    sys.stderr.write(f"database: {shown_url(url)}\n")
    upgrade(url)
    typer.echo("database is up to date")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    demo: Annotated[bool, typer.Option("--demo", help="Seed a demo competition first.")] = False,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="API processes to run (default: PODIUM_WORKERS, 1)."),
    ] = None,
    proxy_headers: Annotated[
        bool | None,
        typer.Option(
            "--proxy-headers/--no-proxy-headers",
            help="Take the client's address and scheme from X-Forwarded-For / -Proto when the "
            "peer is a trusted proxy (default: PODIUM_PROXY_HEADERS, on).",
        ),
    ] = None,
    forwarded_allow_ips: Annotated[
        str | None,
        typer.Option(
            "--forwarded-allow-ips",
            help="The trusted proxies: comma-separated addresses or networks, or * (default: "
            "PODIUM_FORWARDED_ALLOW_IPS, 127.0.0.1,::1).",
        ),
    ] = None,
) -> None:
    """Apply pending migrations, optionally seed the demo, and serve the API."""
    import uvicorn

    from app.config import get_settings
    from app.migrate import upgrade

    settings = get_settings()
    processes = workers or settings.workers
    if processes > 1 and settings.database_url.startswith("sqlite"):
        # SQLite has one writer, and each process admits one request to it at a time: several
        # processes would only queue on the file's lock (up to its 30 s busy timeout).
        _fail("--workers above 1 needs PostgreSQL; SQLite serves from one process")
    # Once, before any API process starts: migrations and the demo are not for each worker.
    upgrade(settings.database_url)
    base = _base_url(host, port)
    if demo:
        from app.cli.demo import seed_demo

        report = seed_demo(settings, base_url=base)
        typer.echo(report)
    typer.echo(f"Podium: {base}/ (the API explorer: {base}/docs)")
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=host,
        port=port,
        workers=processes,
        proxy_headers=settings.proxy_headers if proxy_headers is None else proxy_headers,
        forwarded_allow_ips=forwarded_allow_ips or settings.forwarded_allow_ips,
    )


def _base_url(host: str, port: int) -> str:
    """The address to open for a server listening on ``host:port``: a wildcard interface
    (0.0.0.0, ::) is reached at the loopback address; an IPv6 literal goes in brackets."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(host, host)
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


@users_app.command("create")
def users_create(
    name: Annotated[str, typer.Argument(help="The user's unique name.")],
    organiser: Annotated[
        bool, typer.Option("--organiser", help="May create (and host) competitions.")
    ] = False,
    admin: Annotated[
        bool, typer.Option("--admin", help="A site admin: acts as a host of every competition.")
    ] = False,
    password: Annotated[
        bool,
        typer.Option("--password", help="Ask for a password, to sign in to the web pages."),
    ] = False,
    create: Annotated[
        bool,
        typer.Option(
            "--create", help="Create the database first if there is none (else: refused)."
        ),
    ] = False,
    email: Annotated[
        str | None,
        typer.Option("--email", help="The user's address (taken as verified: you vouch for it)."),
    ] = None,
) -> None:
    """Create a user and print their API token (shown once, stored only hashed)."""

    from sqlalchemy.exc import IntegrityError

    from app.auth.service import create_user, set_password
    from app.config import get_settings
    from app.db import make_engine, make_session_factory, unit_of_work
    from app.errors import AppError
    from app.migrate import upgrade
    from app.models import Role

    settings = get_settings()
    _open_database(settings, create=create, may_create=True)
    secret = _ask_password() if password else None
    upgrade(settings.database_url)
    factory = make_session_factory(make_engine(settings.database_url))
    try:
        with unit_of_work(factory) as session:
            user, token = create_user(
                session,
                name=name,
                role=Role.admin if admin else Role.organiser if organiser else Role.participant,
                secret_key=settings.secret_key,
                email=email,
            )
            if secret is not None:
                set_password(user, password=secret)
    except AppError as exc:
        _fail(exc.detail)
    except IntegrityError:
        _fail(f"the address {email} belongs to another user")
    typer.echo(token)


def _users_session() -> "tuple[AbstractContextManager[Session], Settings]":
    """A unit of work on the configured database, migrated first, and the settings."""
    from app.config import get_settings
    from app.db import make_engine, make_session_factory, unit_of_work
    from app.migrate import upgrade

    settings = get_settings()
    _open_database(settings)
    upgrade(settings.database_url)
    return unit_of_work(make_session_factory(make_engine(settings.database_url))), settings


@users_app.command("token")
def users_token(
    name: Annotated[str, typer.Argument(help="The user's name.")],
    rotate: Annotated[
        bool, typer.Option("--rotate", help="Revoke the user's existing tokens first.")
    ] = False,
) -> None:
    """Issue a new API token for a user and print it (shown once, stored only hashed)."""
    from app.auth.service import rotate_token, user_named
    from app.errors import AppError

    unit, settings = _users_session()
    try:
        with unit as session:
            user = user_named(session, name)
            token = rotate_token(session, user=user, secret_key=settings.secret_key, revoke=rotate)
    except AppError as exc:
        _fail(exc.detail)
    typer.echo(token)


@users_app.command("list")
def users_list() -> None:
    """List users: name, role and how many live tokens each holds (never the tokens)."""
    from app.auth.service import users_with_token_counts

    unit, _settings = _users_session()
    with unit as session:
        rows = [(u.name, u.role.value, n) for u, n in users_with_token_counts(session)]
    typer.echo(f"{'NAME':<24} {'ROLE':<12} TOKENS")
    for name, role, count in rows:
        typer.echo(f"{name:<24} {role:<12} {count}")


@users_app.command("revoke")
def users_revoke(
    name: Annotated[str, typer.Argument(help="The user's name.")],
    token_id: Annotated[
        int | None,
        typer.Option("--token-id", help="Revoke only this token (ids: GET /api/v1/auth/tokens)."),
    ] = None,
) -> None:
    """Revoke a user's tokens: all live ones (signing out every browser of theirs too), or the
    one given by --token-id (signing out the browsers opened with it)."""
    from app.auth.service import revoke_own_token, revoke_user, user_named
    from app.errors import AppError

    unit, _settings = _users_session()
    try:
        with unit as session:
            user = user_named(session, name)
            if token_id is None:
                count = revoke_user(session, user=user)
            else:
                revoke_own_token(session, user=user, token_id=token_id)
                count = 1
    except AppError as exc:
        _fail(exc.detail)
    typer.echo(f"revoked {count} token(s) of '{name}'")


@users_app.command("sessions")
def users_sessions(
    name: Annotated[str, typer.Argument(help="The user's name.")],
    end: Annotated[bool, typer.Option("--end", help="Sign out every browser of the user.")] = False,
) -> None:
    """List a user's signed-in browsers: id, when opened, how (password or which token), last
    seen; never their secrets. --end signs them all out."""
    from app.auth.service import end_sessions, sessions_of, user_named
    from app.errors import AppError

    unit, _settings = _users_session()
    try:
        with unit as session:
            user = user_named(session, name)
            if end:
                count = end_sessions(session, user=user)
            else:
                rows = [
                    (
                        s.id,
                        s.created_at,
                        "password"
                        if s.token is None
                        else f"token {s.token.prefix} (id {s.token.id})",
                        s.last_seen_at,
                    )
                    for s in sessions_of(session, user=user)
                ]
    except AppError as exc:
        _fail(exc.detail)
    if end:
        typer.echo(f"ended {count} session(s) of '{name}'")
        return
    when = "%Y-%m-%d %H:%M:%S"
    typer.echo(f"{'ID':<8} {'OPENED':<20} {'HOW':<32} LAST SEEN")
    for session_id, opened, how, seen in rows:
        typer.echo(f"{session_id:<8} {opened.strftime(when):<20} {how:<32} {seen.strftime(when)}")


@app.command()
def worker(
    concurrency: Annotated[
        int | None,
        typer.Option(
            help="Jobs at once (default PODIUM_WORKER_CONCURRENCY; "
            "PODIUM_CODE_CONCURRENCY for a worker of the code queue alone)."
        ),
    ] = None,
    queues: Annotated[
        str,
        typer.Option(
            "--queues",
            "-Q",
            help="Queues to take jobs from, comma-separated: 'celery' (scoring uploaded files), "
            "'code' (code submissions' runs).",
        ),
    ] = f"{DEFAULT_QUEUE},{CODE_QUEUE}",
    loglevel: Annotated[str, typer.Option(help="Celery's log level.")] = "INFO",
) -> None:
    """Start a Celery scoring worker (broker: PODIUM_CELERY_BROKER_URL)."""
    chosen = worker_queues(queues)
    _require_celery("worker")
    from prometheus_client import start_http_server

    from app.config import get_settings
    from app.jobs.celery_app import make_celery
    from app.ops.logs import configure_logging

    settings = get_settings()
    _open_database(settings)
    configure_logging(settings.log_format, settings.log_level)
    if settings.worker_metrics_port:
        start_http_server(settings.worker_metrics_port)
    n = concurrency or (
        settings.code_concurrency if chosen == [CODE_QUEUE] else settings.worker_concurrency
    )
    # The hosts' reproductions of the winners run where code runs: a worker of the code queue
    # runs them too (a leased loop beside Celery's, in this main process).
    reproducer = None
    if CODE_QUEUE in chosen:
        from app.db import make_engine, make_session_factory
        from app.jobs.reproduce import Reproducer

        reproducer = Reproducer(make_session_factory(make_engine(settings.database_url)), settings)
        reproducer.start()
    try:
        # One job at a time runs in the worker's main thread (the job's time limit is a
        # signal); more run in a pool of processes.
        make_celery(settings).worker_main(
            [
                "worker",
                f"--loglevel={loglevel}",
                f"--concurrency={n}",
                f"--queues={','.join(chosen)}",
                f"--pool={'solo' if n == 1 else 'prefork'}",
                "--prefetch-multiplier=1",
                "--without-gossip",
                "--without-mingle",
            ]
        )
    finally:
        if reproducer is not None:
            reproducer.stop()


def worker_queues(given: str) -> list[str]:
    """The queue names of ``--queues``, each one Podium sends jobs to."""
    names = [name.strip() for name in given.split(",") if name.strip()]
    unknown = sorted(set(names) - {DEFAULT_QUEUE, CODE_QUEUE})
    if not names or unknown:
        raise typer.BadParameter(
            f"unknown queue {', '.join(map(repr, unknown)) or '(none given)'}: "
            f"the queues are '{DEFAULT_QUEUE}' and '{CODE_QUEUE}'",
            param_hint="--queues",
        )
    return list(dict.fromkeys(names))


@app.command()
def beat(
    loglevel: Annotated[str, typer.Option(help="Celery's log level.")] = "INFO",
) -> None:
    """Start Celery beat: it schedules the sweep every PODIUM_SWEEP_INTERVAL_SECONDS."""
    _require_celery("beat")
    import tempfile

    from app.config import get_settings
    from app.jobs.celery_app import make_celery
    from app.ops.logs import configure_logging

    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level)
    schedule = Path(tempfile.gettempdir()) / "podium-beat-schedule"
    make_celery(settings).start(["beat", f"--loglevel={loglevel}", f"--schedule={schedule}"])


@app.command()
def sweep() -> None:
    """One sweep now: re-enqueue queued submissions never delivered and lapsed leases."""
    from app.config import get_settings
    from app.db import make_engine, make_session_factory
    from app.jobs.queue import CeleryQueue
    from app.jobs.sweep import sweep as sweep_once

    settings = get_settings()
    _open_database(settings)
    factory = make_session_factory(make_engine(settings.database_url))
    if settings.scoring_backend == "celery":
        _require_celery("sweep")
        celery_queue = CeleryQueue(settings)
        enqueue = celery_queue.enqueue
        enqueue_code = partial(celery_queue.enqueue, code=True)
    else:  # the server's own scoring thread picks them up at its next sweep
        enqueue = enqueue_code = lambda _submission_id: None  # noqa: E731
    report = sweep_once(
        factory, enqueue, settings=settings, grace_seconds=0, enqueue_code=enqueue_code
    )
    typer.echo(json.dumps(vars(report)))


from app.cli.attack import simulate_attack  # noqa: E402 - its own module, registered here

app.command("simulate-attack")(simulate_attack)


def _ask_password() -> str:
    # Read from the terminal without echo, or from standard input when piped.
    first = str(typer.prompt("Password", hide_input=True))
    if sys.stdin.isatty() and typer.prompt("Repeat it", hide_input=True) != first:
        _fail("the two passwords differ")
    return first


@users_app.command("password")
def users_password(name: Annotated[str, typer.Argument(help="The user's name.")]) -> None:
    """Set or change a user's web sign-in password; every browser of theirs is signed out."""
    from app.auth.service import change_password, user_named
    from app.config import get_settings
    from app.db import make_engine, make_session_factory, unit_of_work
    from app.errors import AppError
    from app.migrate import upgrade

    settings = get_settings()
    _open_database(settings)
    secret = _ask_password()
    upgrade(settings.database_url)
    factory = make_session_factory(make_engine(settings.database_url))
    try:
        with unit_of_work(factory) as session:
            ended = change_password(session, user=user_named(session, name), password=secret)
    except AppError as exc:
        _fail(exc.detail)
    typer.echo(f"password set for {name}; signed out {ended} session(s)")


# The participant commands (login, competitions, files, download, submit, ...).
from app.client.commands import register as _register_participant_commands  # noqa: E402

_register_participant_commands(app)

from app.client.host import competitions_app  # noqa: E402 - the host commands' group

app.add_typer(competitions_app, name="competitions")

from app.client.bundle import bundle_app  # noqa: E402 - `podium bundle import / export`

app.add_typer(bundle_app, name="bundle")

from app.cli.trust import register as _register_trust_commands  # noqa: E402 - verify, backup

_register_trust_commands(app)


def main() -> None:
    """Run the command; a usage error (a missing, unknown or bad option or argument) is one
    ``error:`` line on stderr and exit status 2, like every other error."""
    from app.config import SettingsError

    clicks = _click_exceptions()
    try:
        code = app(standalone_mode=False, prog_name="podium")
    except SettingsError as exc:
        _error_line(str(exc))
        _leave(2)
    except clicks.NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        _leave(2)
    except clicks.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        _error_line(exc.format_message() + hint)
        _leave(2)
    except clicks.ClickException as exc:
        _error_line(exc.format_message())
        _leave(2)
    except (typer.Abort, KeyboardInterrupt):
        _error_line("aborted")
        _leave(2)
    _leave(code if isinstance(code, int) else 0)


def _leave(code: int) -> NoReturn:
    """Exit with ``code`` once everything is written, without the interpreter's teardown.

    A one-shot command has nothing left to tear down, and the teardown can abort the process
    (SIGABRT, "terminate called without an active exception") after the right answer was
    printed: pyarrow's reader threads may still hold the Python stream of a compressed file
    when the interpreter finalises. Seen once in ~180 runs of an exit-2 test on a gzip file.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(code)


def _click_exceptions() -> Any:
    try:  # typer vendors its own click since 0.2x
        from typer._click import exceptions as vendored

        return vendored
    except ImportError:
        from click import exceptions as upstream

        return upstream
