"""rules of play: timeline, team invitations, quotas, selections, moderation, audit log

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 15:11:02.803276
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.models.types


revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('audit_entries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('competition_id', sa.Integer(), nullable=False),
    sa.Column('actor_id', sa.Integer(), nullable=False),
    sa.Column('action', sa.String(length=64), nullable=False),
    sa.Column('target', sa.String(length=200), nullable=False),
    sa.Column('before', sa.JSON(), nullable=True),
    sa.Column('after', sa.JSON(), nullable=True),
    sa.Column('created_at', app.models.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['actor_id'], ['users.id'], name=op.f('fk_audit_entries_actor_id_users')),
    sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], name=op.f('fk_audit_entries_competition_id_competitions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_entries'))
    )
    with op.batch_alter_table('audit_entries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_audit_entries_competition_id'), ['competition_id'], unique=False)

    op.create_table('team_invitations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('competition_id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('inviter_id', sa.Integer(), nullable=False),
    sa.Column('invitee_id', sa.Integer(), nullable=False),
    sa.Column('status', sa.Enum('pending', 'accepted', 'declined', 'cancelled', name='invitation_status', native_enum=False, length=16), nullable=False),
    sa.Column('created_at', app.models.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('responded_at', app.models.types.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], name=op.f('fk_team_invitations_competition_id_competitions'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['invitee_id'], ['users.id'], name=op.f('fk_team_invitations_invitee_id_users')),
    sa.ForeignKeyConstraint(['inviter_id'], ['users.id'], name=op.f('fk_team_invitations_inviter_id_users')),
    sa.ForeignKeyConstraint(['team_id'], ['teams.id'], name=op.f('fk_team_invitations_team_id_teams'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_team_invitations'))
    )
    with op.batch_alter_table('team_invitations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_team_invitations_competition_id'), ['competition_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_team_invitations_invitee_id'), ['invitee_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_team_invitations_team_id'), ['team_id'], unique=False)

    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('start', app.models.types.UTCDateTime(timezone=True), nullable=False, server_default=sa.func.now()))
        batch_op.add_column(sa.Column('team_merge_deadline', app.models.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('total_submission_limit', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('max_team_size', sa.Integer(), nullable=False, server_default='5'))
        batch_op.add_column(sa.Column('score_decimals', sa.Integer(), nullable=False, server_default='5'))

    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('late', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column('refunded', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column('hidden', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column('baseline', sa.Boolean(), nullable=False, server_default=sa.false()))

    with op.batch_alter_table('teams', schema=None) as batch_op:
        batch_op.add_column(sa.Column('leader_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('banned_at', app.models.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_teams_leader_id_users'), 'users', ['leader_id'], ['id'])



def downgrade() -> None:
    with op.batch_alter_table('teams', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_teams_leader_id_users'), type_='foreignkey')
        batch_op.drop_column('banned_at')
        batch_op.drop_column('leader_id')

    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.drop_column('baseline')
        batch_op.drop_column('hidden')
        batch_op.drop_column('refunded')
        batch_op.drop_column('late')

    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.drop_column('score_decimals')
        batch_op.drop_column('max_team_size')
        batch_op.drop_column('total_submission_limit')
        batch_op.drop_column('team_merge_deadline')
        batch_op.drop_column('start')

    with op.batch_alter_table('team_invitations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_team_invitations_team_id'))
        batch_op.drop_index(batch_op.f('ix_team_invitations_invitee_id'))
        batch_op.drop_index(batch_op.f('ix_team_invitations_competition_id'))

    op.drop_table('team_invitations')
    with op.batch_alter_table('audit_entries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_audit_entries_competition_id'))

    op.drop_table('audit_entries')
