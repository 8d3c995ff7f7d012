"""code phases: a phase's submission kind and code limits, a code submission's run log and
provenance, hidden data files (inputs of code runs only)

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02 05:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0017'
down_revision: str | None = '0016'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('phases') as batch:
        batch.add_column(sa.Column('submission_kind', sa.String(length=16), server_default='predictions', nullable=False))
        batch.add_column(sa.Column('code_limits', sa.JSON(), nullable=True))
    with op.batch_alter_table('submissions') as batch:
        batch.add_column(sa.Column('log_head', sa.Text(), nullable=True))
        batch.add_column(sa.Column('log_tail', sa.Text(), nullable=True))
        batch.add_column(sa.Column('log_bytes', sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column('run_failure', sa.String(length=32), nullable=True))
        batch.add_column(sa.Column('code_sha256', sa.String(length=64), nullable=True))
        batch.add_column(sa.Column('inputs_sha256', sa.String(length=64), nullable=True))
        batch.add_column(sa.Column('runtime_fingerprint', sa.String(length=64), nullable=True))
        batch.add_column(sa.Column('output_path', sa.String(length=500), nullable=True))
    with op.batch_alter_table('data_files') as batch:
        batch.add_column(sa.Column('visibility', sa.String(length=8), server_default='public', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('data_files') as batch:
        batch.drop_column('visibility')
    with op.batch_alter_table('submissions') as batch:
        for name in ('output_path', 'runtime_fingerprint', 'inputs_sha256', 'code_sha256', 'run_failure',
                     'log_bytes', 'log_tail', 'log_head'):
            batch.drop_column(name)
    with op.batch_alter_table('phases') as batch:
        batch.drop_column('code_limits')
        batch.drop_column('submission_kind')
