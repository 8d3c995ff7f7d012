"""label sets and team notices

Revision ID: 0008
Revises: 0006
Create Date: 2026-11-30 15:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.models.types


revision: str = '0008'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'team_notices',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('team_id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=64), nullable=False),
        sa.Column('message', sa.Text(), nullable=False),
        sa.Column('created_at', app.models.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ['team_id'], ['teams.id'], name=op.f('fk_team_notices_team_id_teams'), ondelete='CASCADE'
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_team_notices')),
    )
    with op.batch_alter_table('team_notices', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_team_notices_team_id'), ['team_id'], unique=False)
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('labels', sa.JSON(), nullable=True))
    with op.batch_alter_table('answer_keys', schema=None) as batch_op:
        batch_op.add_column(sa.Column('labels', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('answer_keys', schema=None) as batch_op:
        batch_op.drop_column('labels')
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.drop_column('labels')
    with op.batch_alter_table('team_notices', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_team_notices_team_id'))
    op.drop_table('team_notices')
