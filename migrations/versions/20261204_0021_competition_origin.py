"""competition origin: the bundle a competition was first imported from (format, file name,
checksum, when), kept through export and import

Revision ID: 0021
Revises: 0017
Create Date: 2026-12-04 22:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0021'
down_revision: str | None = '0017'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('competitions') as batch:
        batch.add_column(sa.Column('origin', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('competitions') as batch:
        batch.drop_column('origin')
