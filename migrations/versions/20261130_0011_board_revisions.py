"""board revisions: a counter per competition bumped with every standings write, for caching
rendered boards

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-30 22:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('board_revisions',
    sa.Column('competition_id', sa.Integer(), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], name=op.f('fk_board_revisions_competition_id_competitions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('competition_id', name=op.f('pk_board_revisions'))
    )


def downgrade() -> None:
    op.drop_table('board_revisions')
