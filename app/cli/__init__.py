"""The `podium` command line: the server's own commands (:mod:`app.cli.commands`), the attack
simulation (:mod:`app.cli.attack`), the demo seed (:mod:`app.cli.demo`) and, mounted beside them,
the participant's and host's client commands (:mod:`app.client`)."""

from app.cli import accounts as _accounts  # noqa: F401  (`podium users disable`, `podium mail`)
from app.cli import events as _events  # noqa: F401  (`podium events run`)
from app.cli.commands import app, main

__all__ = ["app", "main"]
