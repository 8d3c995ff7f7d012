"""`podium events run`: one pass of the events thread (the time sweep, notifications, webhook
deliveries), for a server run with PODIUM_PROCESS_EVENTS=false (e.g. from cron)."""

import typer

from app.cli.commands import _users_session, app

events_app = typer.Typer(
    help="The events stream: time events, notifications, webhook deliveries.",
    no_args_is_help=True,
)
app.add_typer(events_app, name="events")


@events_app.command("run")
def events_run() -> None:
    """Write the time events that came, turn new events into notices, mails and webhook
    deliveries, and send the deliveries that are due; once. Safe beside running servers."""
    from app.db import make_engine, make_session_factory
    from app.dispatch.worker import process_once

    _unit, settings = _users_session()  # the database checked and migrated
    engine = make_engine(settings.database_url)
    process_once(make_session_factory(engine), settings)
    engine.dispose()
    typer.echo("events processed")
