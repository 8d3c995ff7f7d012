"""phase scorer: the scoring program a bundle brought for a phase

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02 05:00:00

A nullable JSON column: every existing phase is scored by its catalogue columns, as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0016'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN (no batch copy): SQLite adds a nullable column in place.
    op.add_column('phases', sa.Column('scorer', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('phases') as batch:
        batch.drop_column('scorer')
