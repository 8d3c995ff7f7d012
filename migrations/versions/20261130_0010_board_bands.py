"""board bands: rank bands computed by the queue, read by the board pages

Revision ID: 0010
Revises: 0004
Create Date: 2026-11-30 19:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.models.types


revision: str = '0010'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('board_bands',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('answer_key_id', sa.Integer(), nullable=False),
    sa.Column('board', sa.String(length=8), nullable=False),
    sa.Column('bands', sa.JSON(), nullable=False),
    sa.Column('teams', sa.Integer(), nullable=False),
    sa.Column('computed_at', app.models.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['answer_key_id'], ['answer_keys.id'], name=op.f('fk_board_bands_answer_key_id_answer_keys'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_board_bands')),
    sa.UniqueConstraint('answer_key_id', 'board', name=op.f('uq_board_bands_answer_key_id_board'))
    )
    with op.batch_alter_table('board_bands', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_board_bands_answer_key_id'), ['answer_key_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('board_bands', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_board_bands_answer_key_id'))
    op.drop_table('board_bands')
