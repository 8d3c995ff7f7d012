"""competition status: draft (hosts only), published (as before) or archived (read-only)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 23:50:00

The sessions/former-hosts branch adds 0012; the chain is rebased onto it when both land.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every existing competition was public from its creation: it stays published.
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('status', sa.String(length=16), server_default='published', nullable=False)
        )
        batch_op.create_index(batch_op.f('ix_competitions_status'), ['status'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_competitions_status'))
        batch_op.drop_column('status')
