"""competition data files

Revision ID: 0006
Revises: 0003
Create Date: 2026-11-30 15:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.models.types


revision: str = "0006"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "data_files",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("storage_key", sa.String(length=500), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("uploaded_by_id", sa.Integer(), nullable=False),
        sa.Column("created_at", app.models.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["competition_id"], ["competitions.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["uploaded_by_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("competition_id", "name"),
    )
    with op.batch_alter_table("data_files", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_data_files_competition_id"), ["competition_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("data_files", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_data_files_competition_id"))
    op.drop_table("data_files")
