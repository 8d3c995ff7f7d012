"""session origin and former hosts: each browser session names the token it was opened with (so
revoking the token ends it) and when it was last seen; removed co-hosts are remembered for good

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 23:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.models.types


revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # How the existing sessions were opened was never recorded: a token revoked since may have
    # opened any of them, so they end here and everyone signs in once more.
    op.execute("DELETE FROM web_sessions")
    with op.batch_alter_table('web_sessions', schema=None, recreate='always') as batch_op:
        batch_op.add_column(sa.Column('token_id', sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column('last_seen_at', app.models.types.UTCDateTime(timezone=True), nullable=False)
        )
        batch_op.create_foreign_key(
            batch_op.f('fk_web_sessions_token_id_api_tokens'),
            'api_tokens',
            ['token_id'],
            ['id'],
            ondelete='CASCADE',
        )
        batch_op.create_index(batch_op.f('ix_web_sessions_token_id'), ['token_id'], unique=False)

    op.create_table('former_hosts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('competition_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('removed_at', app.models.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], name=op.f('fk_former_hosts_competition_id_competitions'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_former_hosts_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_former_hosts')),
    sa.UniqueConstraint('competition_id', 'user_id', name=op.f('uq_former_hosts_competition_id_user_id'))
    )
    with op.batch_alter_table('former_hosts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_former_hosts_competition_id'), ['competition_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_former_hosts_user_id'), ['user_id'], unique=False)

    # Co-hosts removed before this revision: the audit log recorded each removal as
    # target 'user NAME'.
    op.execute(
        "INSERT INTO former_hosts (competition_id, user_id, removed_at)"
        " SELECT a.competition_id, u.id, MAX(a.created_at)"
        " FROM audit_entries a JOIN users u ON a.target = 'user ' || u.name"
        " WHERE a.action = 'host_remove'"
        " GROUP BY a.competition_id, u.id"
    )


def downgrade() -> None:
    with op.batch_alter_table('former_hosts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_former_hosts_user_id'))
        batch_op.drop_index(batch_op.f('ix_former_hosts_competition_id'))
    op.drop_table('former_hosts')

    with op.batch_alter_table('web_sessions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_web_sessions_token_id'))
        batch_op.drop_constraint(batch_op.f('fk_web_sessions_token_id_api_tokens'), type_='foreignkey')
        batch_op.drop_column('last_seen_at')
        batch_op.drop_column('token_id')
