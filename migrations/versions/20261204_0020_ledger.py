"""the record: each competition's hash chain of ranked facts, and its head; a submission's
attached code (winners' checks)

Revision ID: 0020
Revises: 0024
Create Date: 2026-12-04 22:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.models.types import UTCDateTime


revision: str = '0020'
down_revision: str | None = '0024'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'ledger_entries',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('competition_id', sa.Integer(), nullable=False),
        sa.Column('seq', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=32), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('prev_hash', sa.String(length=64), nullable=False),
        sa.Column('entry_hash', sa.String(length=64), nullable=False),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.Column('opening', sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], name=op.f('fk_ledger_entries_competition_id_competitions'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_ledger_entries')),
        sa.UniqueConstraint('competition_id', 'seq', name=op.f('uq_ledger_entries_competition_id_seq')),
    )
    with op.batch_alter_table('ledger_entries') as batch:
        batch.create_index(batch.f('ix_ledger_entries_competition_id'), ['competition_id'], unique=False)
    op.create_table(
        'ledger_heads',
        sa.Column('competition_id', sa.Integer(), nullable=False),
        sa.Column('seq', sa.Integer(), nullable=False),
        sa.Column('head', sa.String(length=64), nullable=False),
        sa.Column('prev', sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], name=op.f('fk_ledger_heads_competition_id_competitions'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('competition_id', name=op.f('pk_ledger_heads')),
    )
    with op.batch_alter_table('submissions') as batch:
        batch.add_column(sa.Column('attachment_path', sa.String(length=500), nullable=True))
        batch.add_column(sa.Column('attachment_sha256', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('submissions') as batch:
        batch.drop_column('attachment_sha256')
        batch.drop_column('attachment_path')
    op.drop_table('ledger_heads')
    with op.batch_alter_table('ledger_entries') as batch:
        batch.drop_index(batch.f('ix_ledger_entries_competition_id'))
    op.drop_table('ledger_entries')
