"""the hosts' reproductions of the winners' code runs; the scheduled backups' lease and last
result (issue 43)

Revision ID: 0028
Revises: 0026
Create Date: 2026-12-05 01:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.models.types import UTCDateTime


revision: str = '0028'
down_revision: str | None = '0026'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'reproductions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('competition_id', sa.Integer(), nullable=False),
        sa.Column('request', sa.Integer(), nullable=False),
        sa.Column('phase_id', sa.Integer(), nullable=False),
        sa.Column('submission_id', sa.Integer(), nullable=False),
        sa.Column('team_id', sa.Integer(), nullable=False),
        sa.Column('rank', sa.Integer(), nullable=True),
        sa.Column('requested_by_id', sa.Integer(), nullable=True),
        sa.Column('requested_at', UTCDateTime(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('next_attempt_at', UTCDateTime(), nullable=False),
        sa.Column('lease_expires_at', UTCDateTime(), nullable=True),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('finished_at', UTCDateTime(), nullable=True),
        sa.Column('outcome', sa.String(length=16), nullable=True),
        sa.Column('details', sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], name=op.f('fk_reproductions_competition_id_competitions'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['phase_id'], ['phases.id'], name=op.f('fk_reproductions_phase_id_phases'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['submission_id'], ['submissions.id'], name=op.f('fk_reproductions_submission_id_submissions'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['team_id'], ['teams.id'], name=op.f('fk_reproductions_team_id_teams'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['requested_by_id'], ['users.id'], name=op.f('fk_reproductions_requested_by_id_users'), ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_reproductions')),
    )
    with op.batch_alter_table('reproductions') as batch:
        batch.create_index(batch.f('ix_reproductions_competition_id'), ['competition_id'], unique=False)
        batch.create_index(batch.f('ix_reproductions_request'), ['request'], unique=False)
    op.create_table(
        'backup_schedule',
        sa.Column('destination', sa.String(length=500), nullable=False),
        sa.Column('lease_expires_at', UTCDateTime(), nullable=True),
        sa.Column('last_started_at', UTCDateTime(), nullable=True),
        sa.Column('last_finished_at', UTCDateTime(), nullable=True),
        sa.Column('last_result', sa.Text(), nullable=True),
        sa.Column('last_ok', sa.Boolean(), nullable=True),
        sa.PrimaryKeyConstraint('destination', name=op.f('pk_backup_schedule')),
    )


def downgrade() -> None:
    op.drop_table('backup_schedule')
    with op.batch_alter_table('reproductions') as batch:
        batch.drop_index(batch.f('ix_reproductions_request'))
        batch.drop_index(batch.f('ix_reproductions_competition_id'))
    op.drop_table('reproductions')
