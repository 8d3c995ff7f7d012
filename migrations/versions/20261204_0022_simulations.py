"""simulation phases: a phase's environment and ladder settings, episodes, their seats, ratings

Revision ID: 0022
Revises: 0019
Create Date: 2026-12-04 22:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.models.types import UTCDateTime

revision: str = '0022'
down_revision: str | None = '0019'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('phases') as batch:
        batch.add_column(sa.Column('environment', sa.JSON(), nullable=True))
        batch.add_column(sa.Column('simulation', sa.JSON(), nullable=True))
    op.create_table(
        'agent_ratings',
        sa.Column('submission_id', sa.Integer(), sa.ForeignKey('submissions.id', ondelete='CASCADE'), primary_key=True),
        sa.Column('phase_id', sa.Integer(), sa.ForeignKey('phases.id', ondelete='CASCADE'), nullable=False),
        sa.Column('team_id', sa.Integer(), sa.ForeignKey('teams.id', ondelete='CASCADE'), nullable=False),
        sa.Column('mu', sa.Float(), nullable=False),
        sa.Column('sigma', sa.Float(), nullable=False),
        sa.Column('episodes', sa.Integer(), nullable=False),
        sa.Column('active', sa.Boolean(), nullable=False),
        sa.Column('created_at', UTCDateTime(timezone=True), nullable=False),
        sa.Column('updated_at', UTCDateTime(timezone=True), nullable=False),
    )
    op.create_index('ix_agent_ratings_phase_id', 'agent_ratings', ['phase_id'])
    op.create_index('ix_agent_ratings_team_id', 'agent_ratings', ['team_id'])
    op.create_table(
        'episodes',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('competition_id', sa.Integer(), sa.ForeignKey('competitions.id', ondelete='CASCADE'), nullable=False),
        sa.Column('phase_id', sa.Integer(), sa.ForeignKey('phases.id', ondelete='CASCADE'), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('lease_expires_at', UTCDateTime(timezone=True), nullable=True),
        sa.Column('created_at', UTCDateTime(timezone=True), nullable=False),
        sa.Column('started_at', UTCDateTime(timezone=True), nullable=True),
        sa.Column('finished_at', UTCDateTime(timezone=True), nullable=True),
        sa.Column('environment', sa.JSON(), nullable=True),
        sa.Column('steps', sa.Integer(), nullable=True),
        sa.Column('replay', sa.LargeBinary(), nullable=True),
        sa.Column('error', sa.Text(), nullable=True),
    )
    op.create_index('ix_episodes_competition_id', 'episodes', ['competition_id'])
    op.create_index('ix_episodes_phase_id', 'episodes', ['phase_id'])
    op.create_index('ix_episodes_status', 'episodes', ['status'])
    op.create_table(
        'episode_agents',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('episode_id', sa.Integer(), sa.ForeignKey('episodes.id', ondelete='CASCADE'), nullable=False),
        sa.Column('submission_id', sa.Integer(), sa.ForeignKey('submissions.id', ondelete='CASCADE'), nullable=False),
        sa.Column('team_id', sa.Integer(), sa.ForeignKey('teams.id', ondelete='CASCADE'), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=True),
        sa.Column('reward', sa.Float(), nullable=True),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('mu_before', sa.Float(), nullable=True),
        sa.Column('sigma_before', sa.Float(), nullable=True),
        sa.Column('mu_after', sa.Float(), nullable=True),
        sa.Column('sigma_after', sa.Float(), nullable=True),
        sa.Column('log', sa.LargeBinary(), nullable=True),
        sa.UniqueConstraint('episode_id', 'position'),
    )
    op.create_index('ix_episode_agents_episode_id', 'episode_agents', ['episode_id'])
    op.create_index('ix_episode_agents_submission_id', 'episode_agents', ['submission_id'])


def downgrade() -> None:
    op.drop_table('episode_agents')
    op.drop_table('episodes')
    op.drop_table('agent_ratings')
    with op.batch_alter_table('phases') as batch:
        batch.drop_column('simulation')
        batch.drop_column('environment')
