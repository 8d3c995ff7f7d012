"""multi-task phases: a phase's tasks, each with its own columns and imported scoring program

Revision ID: 0025
Revises: 0028
Create Date: 2026-12-05 01:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0025'
down_revision: str | None = '0028'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('phases') as batch:
        batch.add_column(sa.Column('tasks', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('phases') as batch:
        batch.drop_column('tasks')
