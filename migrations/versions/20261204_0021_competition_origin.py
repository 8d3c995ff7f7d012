"""competition origin (the bundle a competition was first imported from: format, file name,
checksum, when; kept through export and import), and migration between phases (a phase's
``migrate`` rule and when it ran; a submission's ``migrated_from_id``)

Revision ID: 0021
Revises: 0022
Create Date: 2026-12-04 22:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.models.types


revision: str = '0021'
down_revision: str | None = '0022'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('competitions') as batch:
        batch.add_column(sa.Column('origin', sa.JSON(), nullable=True))
    with op.batch_alter_table('phases') as batch:
        batch.add_column(sa.Column('migrate', sa.JSON(), nullable=True))
        batch.add_column(sa.Column('migrated_at', app.models.types.UTCDateTime(timezone=True), nullable=True))
    with op.batch_alter_table('submissions') as batch:
        batch.add_column(sa.Column('migrated_from_id', sa.Integer(), nullable=True))
        batch.create_foreign_key(
            'fk_submissions_migrated_from_id', 'submissions', ['migrated_from_id'], ['id'],
            ondelete='SET NULL',
        )


def downgrade() -> None:
    with op.batch_alter_table('submissions') as batch:
        batch.drop_constraint('fk_submissions_migrated_from_id', type_='foreignkey')
        batch.drop_column('migrated_from_id')
    with op.batch_alter_table('phases') as batch:
        batch.drop_column('migrated_at')
        batch.drop_column('migrate')
    with op.batch_alter_table('competitions') as batch:
        batch.drop_column('origin')
