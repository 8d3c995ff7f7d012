"""honest leaderboards: public board mode, interval setting, score stats

Revision ID: 0009
Revises: 0007
Create Date: 2026-11-30 16:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.models.types


revision: str = '0009'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('public_board_mode', sa.String(length=16), nullable=False, server_default='exact'))
        batch_op.add_column(sa.Column('ladder_step', sa.Float(), nullable=True))
        batch_op.add_column(sa.Column('score_intervals', sa.Boolean(), nullable=False, server_default=sa.true()))

    op.create_table('score_stats',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('score_id', sa.Integer(), nullable=False),
    sa.Column('public_interval', sa.JSON(), nullable=True),
    sa.Column('private_interval', sa.JSON(), nullable=True),
    sa.Column('public_replicates', sa.LargeBinary(), nullable=True),
    sa.Column('private_replicates', sa.LargeBinary(), nullable=True),
    sa.Column('ladder_threshold', sa.Float(), nullable=True),
    sa.Column('note', sa.String(length=200), nullable=True),
    sa.Column('created_at', app.models.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['score_id'], ['scores.id'], name=op.f('fk_score_stats_score_id_scores'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_score_stats'))
    )
    with op.batch_alter_table('score_stats', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_score_stats_score_id'), ['score_id'], unique=True)


def downgrade() -> None:
    with op.batch_alter_table('score_stats', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_score_stats_score_id'))
    op.drop_table('score_stats')
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.drop_column('score_intervals')
        batch_op.drop_column('ladder_step')
        batch_op.drop_column('public_board_mode')
