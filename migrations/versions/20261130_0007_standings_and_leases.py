"""materialised standings; scoring leases

Revision ID: 0007
Revises: 0008
Create Date: 2026-11-30 15:30:00

Standings: one row per (answer-key version, board, team), kept by app.leaderboard.standings and
filled here from the existing scores. Leases: attempts, lease_expires_at and request_id on
submissions, a per-competition scoring time limit.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

import app.models.types


revision: str = '0007'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'standings',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('competition_id', sa.Integer(), nullable=False),
        sa.Column('answer_key_id', sa.Integer(), nullable=False),
        sa.Column('board', sa.String(length=8), nullable=False),
        sa.Column('team_id', sa.Integer(), nullable=False),
        sa.Column('submission_id', sa.Integer(), nullable=False),
        sa.Column('score', sa.Float(), nullable=False),
        sa.Column('order_key', sa.Float(), nullable=False),
        sa.Column('submitted_at', app.models.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column('baseline', sa.Boolean(), nullable=False),
        sa.Column('entries', sa.Integer(), nullable=False),
        sa.Column('last_submission_at', app.models.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['answer_key_id'], ['answer_keys.id'], name=op.f('fk_standings_answer_key_id_answer_keys'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], name=op.f('fk_standings_competition_id_competitions'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['submission_id'], ['submissions.id'], name=op.f('fk_standings_submission_id_submissions'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['team_id'], ['teams.id'], name=op.f('fk_standings_team_id_teams'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_standings')),
        sa.UniqueConstraint('answer_key_id', 'board', 'team_id', name=op.f('uq_standings_answer_key_id_board_team_id')),
    )
    op.create_index('ix_standings_board_order', 'standings', ['answer_key_id', 'board', 'order_key', 'submitted_at', 'submission_id'], unique=False)
    op.create_index(op.f('ix_standings_competition_id'), 'standings', ['competition_id'], unique=False)
    op.create_index(op.f('ix_standings_submission_id'), 'standings', ['submission_id'], unique=False)
    op.create_index(op.f('ix_standings_team_id'), 'standings', ['team_id'], unique=False)
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attempts', sa.Integer(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('lease_expires_at', app.models.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('request_id', sa.String(length=64), nullable=True))
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('scoring_time_limit_seconds', sa.Integer(), nullable=True))

    # Fill the standings from the scores already there. Only the columns this revision knows are
    # read: later revisions may add more to these tables.
    from app.leaderboard.standings import rebuild
    from app.models import Competition

    bind = op.get_bind()
    session = Session(bind=bind)
    rows = bind.execute(
        sa.text(
            "SELECT id, metric_name, custom_metric_direction, final_selection_limit"
            " FROM competitions"
        )
    ).all()
    for id_, metric_name, direction, limit in rows:
        rebuild(
            session,
            Competition(
                id=id_,
                metric_name=metric_name,
                custom_metric_direction=direction,
                final_selection_limit=limit,
            ),
            bump_revision=False,  # the table comes with revision 0011
        )


def downgrade() -> None:
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.drop_column('scoring_time_limit_seconds')
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.drop_column('request_id')
        batch_op.drop_column('lease_expires_at')
        batch_op.drop_column('attempts')
    op.drop_index(op.f('ix_standings_team_id'), table_name='standings')
    op.drop_index(op.f('ix_standings_submission_id'), table_name='standings')
    op.drop_index(op.f('ix_standings_competition_id'), table_name='standings')
    op.drop_index('ix_standings_board_order', table_name='standings')
    op.drop_table('standings')
