"""The ``podium`` command: run the server, manage users, and score files locally."""

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

app = typer.Typer(
    name="podium",
    help="Podium: a self-hosted evaluation service for machine-learning competitions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
users_app = typer.Typer(help="Manage users and their API tokens.", no_args_is_help=True)
app.add_typer(users_app, name="users")


def _fail(message: str) -> NoReturn:
    # The contract: exit status 2 and exactly one line on stderr, never a traceback.
    sys.stderr.write("error: " + " ".join(message.split()) + "\n")
    raise typer.Exit(code=2)


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
) -> None:
    """Score SUBMISSION against ANSWER_KEY and print one JSON object."""
    from app.config import get_settings
    from app.metrics import MetricParamsError, UnknownMetric
    from app.scoring.core import ScoringError, score_files
    from app.scoring.keys import intake_limits

    parsed: dict[str, Any] = {}
    if params:
        try:
            parsed = json.loads(params)
        except json.JSONDecodeError as exc:
            _fail(f"--params is not valid JSON: {exc.msg} at character {exc.pos}")
        if not isinstance(parsed, dict):
            _fail("--params must be a JSON object")
    for label, path in (("answer key", answer_key), ("submission", submission)):
        if not path.is_file():
            _fail(f"{label} file not found: {path}")
    try:
        result = score_files(
            metric_name=metric,
            params=parsed,
            answer_key=answer_key,
            submission=submission,
            id_column=id_column,
            details=details,
            limits=intake_limits(get_settings()),
        )
    except (UnknownMetric, MetricParamsError) as exc:
        _fail(str(exc))
    except ScoringError as exc:
        where = "answer key" if exc.source == "answer_key" else "submission"
        _fail(f"{where}: {exc.message}")
    except Exception as exc:  # noqa: BLE001 - the contract forbids tracebacks
        _fail(f"unexpected failure: {type(exc).__name__}: {exc}")
    typer.echo(json.dumps(result.as_json(metric)))


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
    from app.migrate import upgrade

    upgrade(get_settings().database_url)
    typer.echo("database is up to date")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    demo: Annotated[bool, typer.Option("--demo", help="Seed a demo competition first.")] = False,
) -> None:
    """Apply pending migrations, optionally seed the demo, and serve the API."""
    import uvicorn

    from app.config import get_settings
    from app.main import create_app
    from app.migrate import upgrade

    settings = get_settings()
    upgrade(settings.database_url)
    if demo:
        from app.demo import seed_demo

        report = seed_demo(settings)
        typer.echo(report)
    uvicorn.run(create_app(settings), host=host, port=port)


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
) -> None:
    """Create a user and print their API token (shown once, stored only hashed)."""
    from app.auth.service import create_user, set_password
    from app.config import get_settings
    from app.db import make_engine, make_session_factory, unit_of_work
    from app.errors import AppError
    from app.migrate import upgrade
    from app.models import Role

    secret = _ask_password() if password else None
    settings = get_settings()
    upgrade(settings.database_url)
    factory = make_session_factory(make_engine(settings.database_url))
    try:
        with unit_of_work(factory) as session:
            user, token = create_user(
                session,
                name=name,
                role=Role.admin if admin else Role.organiser if organiser else Role.participant,
                secret_key=settings.secret_key,
            )
            if secret is not None:
                set_password(user, password=secret)
    except AppError as exc:
        _fail(exc.detail)
    typer.echo(token)


def _ask_password() -> str:
    # Read from the terminal without echo, or from standard input when piped.
    first = str(typer.prompt("Password", hide_input=True))
    if sys.stdin.isatty() and typer.prompt("Repeat it", hide_input=True) != first:
        _fail("the two passwords differ")
    return first


@users_app.command("password")
def users_password(name: Annotated[str, typer.Argument(help="The user's name.")]) -> None:
    """Set or change a user's web sign-in password."""
    from sqlalchemy import select

    from app.auth.service import set_password
    from app.config import get_settings
    from app.db import make_engine, make_session_factory, unit_of_work
    from app.errors import AppError
    from app.migrate import upgrade
    from app.models import User

    secret = _ask_password()
    settings = get_settings()
    upgrade(settings.database_url)
    factory = make_session_factory(make_engine(settings.database_url))
    try:
        with unit_of_work(factory) as session:
            user = session.scalar(select(User).where(User.name == name))
            if user is None:
                _fail(f"no user named '{name}'")
            set_password(user, password=secret)
    except AppError as exc:
        _fail(exc.detail)
    typer.echo(f"password set for {name}")


# The participant commands (login, competitions, files, download, submit, ...).
from app.client.commands import register as _register_participant_commands  # noqa: E402

_register_participant_commands(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
