"""custom metrics

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 15:12:35.028922
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.models.types


revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('custom_metric_path', sa.String(length=500), nullable=True))
        batch_op.add_column(sa.Column('custom_metric_sha256', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('custom_metric_direction', sa.String(length=16), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('competitions', schema=None) as batch_op:
        batch_op.drop_column('custom_metric_direction')
        batch_op.drop_column('custom_metric_sha256')
        batch_op.drop_column('custom_metric_path')

