"""shared counters: failed sign-ins counted in the database when several API processes share
it without Redis

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 04:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0015'
down_revision: str | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('shared_counters',
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('key', sa.String(length=255), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.Column('expires_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('kind', 'key', name=op.f('pk_shared_counters'))
    )
    op.create_index('ix_shared_counters_expires_at', 'shared_counters', ['expires_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_shared_counters_expires_at', table_name='shared_counters')
    op.drop_table('shared_counters')
