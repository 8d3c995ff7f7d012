"""`python -m app.cli`, the same as the `podium` script."""

from app.cli.commands import main

main()
