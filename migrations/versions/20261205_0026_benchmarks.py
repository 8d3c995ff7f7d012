"""benchmark mode (a competition that never ends, whose new key versions rescore every scored
submission) and its board of every submission

Revision ID: 0026
Revises: 0020
Create Date: 2026-12-05 01:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0026'
down_revision: str | None = '0020'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('competitions') as batch:
        batch.add_column(
            sa.Column('benchmark', sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(
            sa.Column(
                'board_every_submission', sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )


def downgrade() -> None:
    with op.batch_alter_table('competitions') as batch:
        batch.drop_column('board_every_submission')
        batch.drop_column('benchmark')
