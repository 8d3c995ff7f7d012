"""web sign-in: password hashes and browser sessions

Revision ID: 0005
Revises: 0006
Create Date: 2026-11-30 15:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.models.types


revision: str = '0005'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('password_hash', sa.String(length=255), nullable=True))

    op.create_table(
        'web_sessions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('token_hash', sa.String(length=64), nullable=False),
        sa.Column('created_at', app.models.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column('expires_at', app.models.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_web_sessions_user_id_users'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_web_sessions')),
        sa.UniqueConstraint('token_hash', name=op.f('uq_web_sessions_token_hash')),
    )
    with op.batch_alter_table('web_sessions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_web_sessions_user_id'), ['user_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('web_sessions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_web_sessions_user_id'))
    op.drop_table('web_sessions')
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('password_hash')
