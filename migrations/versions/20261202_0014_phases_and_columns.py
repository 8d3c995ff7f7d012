"""phases and leaderboard columns: every competition becomes one phase `main`, its keys and
submissions that phase's, its metric one column

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02 04:30:00

Existing competitions keep their boards exactly: the one phase takes the competition's window,
quotas and selection limit, counts by Kaggle's chosen rule and shows a public board; the column
list stays empty (read as one column named after the metric) and score rows without per-column
values are read through their three floats.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.models.types


revision: str = '0014'
down_revision: str | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'phases',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('competition_id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=64), nullable=False),
        sa.Column('title', sa.String(length=200), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('start', app.models.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column('end', app.models.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column('daily_submission_limit', sa.Integer(), nullable=False),
        sa.Column('total_submission_limit', sa.Integer(), nullable=True),
        sa.Column('final_selection_limit', sa.Integer(), nullable=False),
        sa.Column('board', sa.String(length=8), nullable=False),
        sa.Column('counts', sa.String(length=8), nullable=False),
        sa.Column('columns', sa.JSON(), nullable=True),
        sa.Column('entry_fields', sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], name=op.f('fk_phases_competition_id_competitions'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_phases')),
        sa.UniqueConstraint('competition_id', 'name', name=op.f('uq_phases_competition_id_name')),
    )
    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_phases_competition_id'), ['competition_id'], unique=False)

    # One phase `main` per competition, with its window and rules.
    op.execute(
        """
        INSERT INTO phases (competition_id, name, title, position, start, "end",
            daily_submission_limit, total_submission_limit, final_selection_limit, board, counts,
            columns, entry_fields)
        SELECT id, 'main', 'Main', 0, start, deadline, daily_submission_limit,
            total_submission_limit, final_selection_limit, 'public', 'chosen', NULL, '[]'
        FROM competitions
        """
    )
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('columns', sa.JSON(), nullable=True))

    for table in ('answer_keys', 'submissions'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('phase_id', sa.Integer(), nullable=True))
        op.execute(
            f"UPDATE {table} SET phase_id = (SELECT phases.id FROM phases "
            f"WHERE phases.competition_id = {table}.competition_id)"
        )
    with op.batch_alter_table('answer_keys', schema=None) as batch_op:
        batch_op.alter_column('phase_id', existing_type=sa.Integer(), nullable=False)
        batch_op.drop_constraint('uq_answer_keys_competition_id_version', type_='unique')
        batch_op.create_unique_constraint(batch_op.f('uq_answer_keys_phase_id_version'), ['phase_id', 'version'])
        batch_op.create_foreign_key(batch_op.f('fk_answer_keys_phase_id_phases'), 'phases', ['phase_id'], ['id'], ondelete='CASCADE')
        batch_op.create_index(batch_op.f('ix_answer_keys_phase_id'), ['phase_id'], unique=False)
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.alter_column('phase_id', existing_type=sa.Integer(), nullable=False)
        batch_op.add_column(sa.Column('details', sa.JSON(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_submissions_phase_id_phases'), 'phases', ['phase_id'], ['id'], ondelete='CASCADE')
        batch_op.create_index(batch_op.f('ix_submissions_phase_id'), ['phase_id'], unique=False)
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.add_column(sa.Column('columns', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('public_tie', sa.String(length=400), server_default='', nullable=False))
        batch_op.add_column(sa.Column('private_tie', sa.String(length=400), server_default='', nullable=False))
    op.drop_index('ix_standings_board_order', table_name='standings')
    with op.batch_alter_table('standings', schema=None) as batch_op:
        batch_op.add_column(sa.Column('tie_key', sa.String(length=400), server_default='', nullable=False))
        # Each baseline stands on its own row: one row per team, and one per baseline submission.
        batch_op.drop_constraint('uq_standings_answer_key_id_board_team_id', type_='unique')
        batch_op.create_unique_constraint(batch_op.f('uq_standings_answer_key_id_board_submission_id'), ['answer_key_id', 'board', 'submission_id'])
    op.create_index('ix_standings_board_order', 'standings', ['answer_key_id', 'board', 'order_key', 'tie_key', 'submitted_at', 'submission_id'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_standings_board_order', table_name='standings')
    with op.batch_alter_table('standings', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_standings_answer_key_id_board_submission_id'), type_='unique')
        batch_op.create_unique_constraint('uq_standings_answer_key_id_board_team_id', ['answer_key_id', 'board', 'team_id'])
        batch_op.drop_column('tie_key')
    op.create_index('ix_standings_board_order', 'standings', ['answer_key_id', 'board', 'order_key', 'submitted_at', 'submission_id'], unique=False)
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.drop_column('private_tie')
        batch_op.drop_column('public_tie')
        batch_op.drop_column('columns')
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_submissions_phase_id'))
        batch_op.drop_constraint(batch_op.f('fk_submissions_phase_id_phases'), type_='foreignkey')
        batch_op.drop_column('details')
        batch_op.drop_column('phase_id')
    with op.batch_alter_table('answer_keys', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_answer_keys_phase_id'))
        batch_op.drop_constraint(batch_op.f('fk_answer_keys_phase_id_phases'), type_='foreignkey')
        batch_op.drop_constraint(batch_op.f('uq_answer_keys_phase_id_version'), type_='unique')
        batch_op.create_unique_constraint('uq_answer_keys_competition_id_version', ['competition_id', 'version'])
        batch_op.drop_column('phase_id')
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.drop_column('columns')
    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_phases_competition_id'))
    op.drop_table('phases')
