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

    # Fill the standings from the scores already there, by this revision's rules, in plain SQL
    # and Python of its own: a migration must not call today's code, whose tables move on.
    bind = op.get_bind()
    competitions = bind.execute(
        sa.text(
            "SELECT id, metric_name, custom_metric_direction, final_selection_limit"
            " FROM competitions"
        )
    ).all()
    for id_, metric_name, direction, limit in competitions:
        _fill_standings(bind, id_, _maximize(metric_name, direction), limit)


def _maximize(metric_name: str, custom_direction: str | None) -> bool:
    if metric_name == 'custom':
        return (custom_direction or 'maximize') == 'maximize'
    from app.metrics import get_metric  # the catalogue's directions do not change

    return get_metric(metric_name).greater_is_better


def _fill_standings(bind, competition_id: int, maximize: bool, limit: int) -> None:  # type: ignore[no-untyped-def]
    """Public: each team's best public score; private: the best private score among its
    selected submissions or, none selected, among its best ``limit`` by public score. Ties go
    to the earlier submission."""
    rows = bind.execute(
        sa.text(
            "SELECT s.answer_key_id, sub.team_id, sub.id, sub.created_at, sub.selected,"
            " sub.baseline, s.public_score, s.private_score"
            " FROM scores s JOIN submissions sub ON sub.id = s.submission_id"
            " JOIN teams t ON t.id = sub.team_id"
            " WHERE sub.competition_id = :c AND NOT sub.hidden AND NOT sub.late"
            " AND t.banned_at IS NULL"
        ),
        {"c": competition_id},
    ).all()
    history = {
        team: (count, last)
        for team, count, last in bind.execute(
            sa.text(
                "SELECT team_id, count(*), max(created_at) FROM submissions"
                " WHERE competition_id = :c GROUP BY team_id"
            ),
            {"c": competition_id},
        )
    }
    sign = -1.0 if maximize else 1.0
    groups: dict = {}
    for row in rows:
        groups.setdefault((row[0], row[1]), []).append(row)
    insert = sa.text(
        "INSERT INTO standings (competition_id, answer_key_id, board, team_id, submission_id,"
        " score, order_key, submitted_at, baseline, entries, last_submission_at) VALUES"
        " (:c, :k, :board, :t, :s, :score, :order, :at, :baseline, :entries, :last)"
    )

    def best(candidates, index):  # type: ignore[no-untyped-def]
        return min(candidates, key=lambda r: (sign * r[index], r[3], r[2]))

    for (key_id, team_id), subs in groups.items():
        entries, last = history[team_id]
        picks = []
        with_public = [r for r in subs if r[6] is not None]
        if with_public:
            picks.append(('public', best(with_public, 6), 6))
        chosen = [r for r in subs if r[4]]
        if not chosen:
            chosen = sorted(with_public, key=lambda r: (sign * r[6], r[3], r[2]))[:limit]
        pool = [r for r in chosen if r[7] is not None]
        if pool:
            picks.append(('private', best(pool, 7), 7))
        for board, row, index in picks:
            bind.execute(
                insert,
                {
                    'c': competition_id, 'k': key_id, 'board': board, 't': team_id,
                    's': row[2], 'score': row[index], 'order': sign * row[index],
                    'at': row[3], 'baseline': row[5], 'entries': entries, 'last': last,
                },
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
