"""data file release: a public file held back until a phase's start

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-04 22:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0019'
down_revision: str | None = '0018'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('data_files') as batch:
        batch.add_column(sa.Column('release_phase_id', sa.Integer(), nullable=True))
        batch.create_foreign_key(
            'fk_data_files_release_phase_id_phases', 'phases', ['release_phase_id'], ['id'],
            ondelete='SET NULL',
        )


def downgrade() -> None:
    with op.batch_alter_table('data_files') as batch:
        batch.drop_constraint('fk_data_files_release_phase_id_phases', type_='foreignkey')
        batch.drop_column('release_phase_id')
