"""accounts: e-mail addresses and account states, link secrets, linked OpenID identities, the
mail outbox and the site's audit trail

Every existing user keeps working: no address, nothing to verify (must_verify false), active.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04 22:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.models.types import UTCDateTime  # noqa: F401


revision: str = '0018'
down_revision: str | None = '0017'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('users') as batch:
        batch.add_column(sa.Column('email', sa.String(length=320), nullable=True))
        batch.add_column(sa.Column('email_verified_at', UTCDateTime(), nullable=True))
        batch.add_column(sa.Column('pending_email', sa.String(length=320), nullable=True))
        batch.add_column(sa.Column('must_verify', sa.Boolean(), server_default=sa.false(), nullable=False))
        batch.add_column(sa.Column('state', sa.Enum('active', 'disabled', 'deleted', name='user_state', native_enum=False, length=16), server_default='active', nullable=False))
        batch.create_unique_constraint('uq_users_email', ['email'])
    op.create_table(
        'link_secrets',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('purpose', sa.String(length=32), nullable=False),
        sa.Column('secret_hash', sa.String(length=64), nullable=False),
        sa.Column('prefix', sa.String(length=16), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=True),
        sa.Column('email', sa.String(length=320), nullable=True),
        sa.Column('data', sa.JSON(), nullable=True),
        sa.Column('uses_left', sa.Integer(), nullable=False),
        sa.Column('expires_at', UTCDateTime(), nullable=False),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.Column('created_by_id', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('secret_hash'),
    )
    op.create_index('ix_link_secrets_user_id', 'link_secrets', ['user_id'])
    op.create_index('ix_link_secrets_expires_at', 'link_secrets', ['expires_at'])
    op.create_index('ix_link_secrets_purpose_user', 'link_secrets', ['purpose', 'user_id'])
    op.create_table(
        'oidc_identities',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('provider', sa.String(length=64), nullable=False),
        sa.Column('issuer', sa.String(length=500), nullable=False),
        sa.Column('subject', sa.String(length=255), nullable=False),
        sa.Column('email', sa.String(length=320), nullable=True),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.Column('last_used_at', UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('issuer', 'subject', name='uq_oidc_identity'),
    )
    op.create_index('ix_oidc_identities_user_id', 'oidc_identities', ['user_id'])
    op.create_table(
        'outbound_mails',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('to_addr', sa.String(length=320), nullable=False),
        sa.Column('subject', sa.String(length=300), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('next_attempt_at', UTCDateTime(), nullable=False),
        sa.Column('lease_expires_at', UTCDateTime(), nullable=True),
        sa.Column('last_error', sa.String(length=500), nullable=True),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.Column('sent_at', UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_outbound_mails_due', 'outbound_mails', ['status', 'next_attempt_at'])
    op.create_table(
        'site_audit_entries',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('actor_id', sa.Integer(), nullable=True),
        sa.Column('action', sa.String(length=64), nullable=False),
        sa.Column('target', sa.String(length=200), nullable=False),
        sa.Column('detail', sa.JSON(), nullable=True),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(['actor_id'], ['users.id'], ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_site_audit_entries_created_at', 'site_audit_entries', ['created_at'])


def downgrade() -> None:
    op.drop_table('site_audit_entries')
    op.drop_table('outbound_mails')
    op.drop_table('oidc_identities')
    op.drop_table('link_secrets')
    with op.batch_alter_table('users') as batch:
        batch.drop_constraint('uq_users_email', type_='unique')
        for name in ('state', 'must_verify', 'pending_email', 'email_verified_at', 'email'):
            batch.drop_column(name)
