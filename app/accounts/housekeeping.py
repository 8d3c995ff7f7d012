"""What strangers leave behind, cleared on a schedule so that it stays bounded: link secrets
that expired or were used up, and sign-ups nobody verified within a week. Safe to run twice, and
in several processes at once."""

import logging

from sqlalchemy.orm import Session, sessionmaker

from app.accounts import links
from app.accounts.service import prune_unverified
from app.db import unit_of_work

log = logging.getLogger(__name__)


def housekeeping(factory: sessionmaker[Session]) -> tuple[int, int]:
    """Returns (links pruned, unverified accounts removed)."""
    with unit_of_work(factory) as session:
        pruned = links.prune(session)
        removed = prune_unverified(session)
    if pruned or removed:
        log.info("accounts: %d spent links and %d unverified sign-ups removed", pruned, removed)
    return pruned, removed
