"""competition hosts: the owner (creator) and co-hosts of each competition

Revision ID: 0004
Revises: 0005
Create Date: 2026-11-30 15:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.models.types


revision: str = '0004'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('competition_hosts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('competition_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('role', sa.Enum('owner', 'cohost', name='host_role', native_enum=False, length=16), nullable=False),
    sa.Column('added_at', app.models.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], name=op.f('fk_competition_hosts_competition_id_competitions'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_competition_hosts_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_competition_hosts')),
    sa.UniqueConstraint('competition_id', 'user_id', name=op.f('uq_competition_hosts_competition_id_user_id'))
    )
    with op.batch_alter_table('competition_hosts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_competition_hosts_competition_id'), ['competition_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_competition_hosts_user_id'), ['user_id'], unique=False)

    # Until now every organiser acted as a host of every competition; from here on only the
    # creator does (as its owner), and the owner adds co-hosts.
    op.execute(
        "INSERT INTO competition_hosts (competition_id, user_id, role, added_at)"
        " SELECT id, created_by_id, 'owner', created_at FROM competitions"
    )


def downgrade() -> None:
    with op.batch_alter_table('competition_hosts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_competition_hosts_user_id'))
        batch_op.drop_index(batch_op.f('ix_competition_hosts_competition_id'))

    op.drop_table('competition_hosts')
