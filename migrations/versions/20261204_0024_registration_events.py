"""registration and events: who takes part (registration modes, allow and deny lists, rules and
their versions, registrations, announcements), and the one stream of events with its readers'
marks, notifications, notification settings and webhooks

Every existing competition stays open, without rules; everyone already on a team keeps taking
part (an approved registration each).

Revision ID: 0024
Revises: 0021
Create Date: 2026-12-04 23:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.models.types import UTCDateTime

revision: str = '0024'
down_revision: str | None = '0021'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('competitions') as batch:
        batch.add_column(sa.Column('registration', sa.String(length=16), server_default='open', nullable=False))
        batch.add_column(sa.Column('allow', sa.JSON(), nullable=True))
        batch.add_column(sa.Column('deny', sa.JSON(), nullable=True))
        batch.add_column(sa.Column('rules', sa.Text(), server_default='', nullable=False))
        batch.add_column(sa.Column('rules_version', sa.Integer(), server_default='0', nullable=False))
    op.create_table(
        'registrations',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('competition_id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('status', sa.Enum('pending', 'approved', 'denied', 'banned', name='registration_status', native_enum=False, length=16), nullable=False),
        sa.Column('message', sa.Text(), nullable=False),
        sa.Column('decision_message', sa.Text(), nullable=False),
        sa.Column('rules_version', sa.Integer(), nullable=True),
        sa.Column('rules_accepted_at', UTCDateTime(), nullable=True),
        sa.Column('requested_at', UTCDateTime(), nullable=False),
        sa.Column('decided_at', UTCDateTime(), nullable=True),
        sa.Column('decided_by_id', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['decided_by_id'], ['users.id'], ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('competition_id', 'user_id'),
    )
    op.create_index('ix_registrations_competition_id', 'registrations', ['competition_id'])
    op.create_index('ix_registrations_user_id', 'registrations', ['user_id'])
    op.create_table(
        'announcements',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('competition_id', sa.Integer(), nullable=False),
        sa.Column('author_id', sa.Integer(), nullable=True),
        sa.Column('subject', sa.String(length=200), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('audience', sa.JSON(), nullable=False),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['author_id'], ['users.id'], ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_announcements_competition_id', 'announcements', ['competition_id'])
    op.create_index('ix_announcements_created_at', 'announcements', ['created_at'])
    op.create_table(
        'events',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=64), nullable=False),
        sa.Column('competition_id', sa.Integer(), nullable=True),
        sa.Column('user_id', sa.Integer(), nullable=True),
        sa.Column('team_id', sa.Integer(), nullable=True),
        sa.Column('phase_id', sa.Integer(), nullable=True),
        sa.Column('submission_id', sa.Integer(), nullable=True),
        sa.Column('payload', sa.JSON(), nullable=False),
        sa.Column('dedupe_key', sa.String(length=200), nullable=True),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('dedupe_key'),
    )
    op.create_index('ix_events_competition_id', 'events', ['competition_id'])
    op.create_index('ix_events_created_at', 'events', ['created_at'])
    op.create_table(
        'event_marks',
        sa.Column('reader', sa.String(length=32), nullable=False),
        sa.Column('event_id', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['event_id'], ['events.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('reader', 'event_id'),
    )
    op.create_table(
        'notifications',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('competition_id', sa.Integer(), nullable=True),
        sa.Column('kind', sa.String(length=64), nullable=False),
        sa.Column('title', sa.String(length=300), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('link', sa.String(length=500), nullable=False),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.Column('read_at', UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_notifications_user_id', 'notifications', ['user_id'])
    op.create_table(
        'notification_settings',
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('choices', sa.JSON(), nullable=False),
        sa.Column('no_mail', sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('user_id'),
    )
    op.create_table(
        'webhook_endpoints',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('competition_id', sa.Integer(), nullable=False),
        sa.Column('url', sa.String(length=2000), nullable=False),
        sa.Column('events', sa.JSON(), nullable=False),
        sa.Column('secret', sa.String(length=100), nullable=False),
        sa.Column('created_by_id', sa.Integer(), nullable=True),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.Column('failures_in_a_row', sa.Integer(), nullable=False),
        sa.Column('disabled_at', UTCDateTime(), nullable=True),
        sa.Column('disabled_reason', sa.String(length=500), nullable=True),
        sa.ForeignKeyConstraint(['competition_id'], ['competitions.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_webhook_endpoints_competition_id', 'webhook_endpoints', ['competition_id'])
    op.create_table(
        'webhook_deliveries',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('endpoint_id', sa.Integer(), nullable=False),
        sa.Column('event_id', sa.Integer(), nullable=True),
        sa.Column('kind', sa.String(length=64), nullable=False),
        sa.Column('message_id', sa.String(length=64), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('next_attempt_at', UTCDateTime(), nullable=False),
        sa.Column('lease_expires_at', UTCDateTime(), nullable=True),
        sa.Column('last_status', sa.Integer(), nullable=True),
        sa.Column('last_error', sa.String(length=500), nullable=True),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.Column('delivered_at', UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(['endpoint_id'], ['webhook_endpoints.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['event_id'], ['events.id'], ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('message_id'),
    )
    op.create_index('ix_webhook_deliveries_endpoint_id', 'webhook_deliveries', ['endpoint_id'])
    op.create_index('ix_webhook_deliveries_status', 'webhook_deliveries', ['status'])
    op.create_table(
        'webhook_attempts',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('delivery_id', sa.Integer(), nullable=False),
        sa.Column('at', UTCDateTime(), nullable=False),
        sa.Column('status_code', sa.Integer(), nullable=True),
        sa.Column('error', sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(['delivery_id'], ['webhook_deliveries.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_webhook_attempts_delivery_id', 'webhook_attempts', ['delivery_id'])
    # Everyone on a team takes part already: an approved registration each, no rules accepted
    # (there are none yet).
    op.execute(
        "INSERT INTO registrations (competition_id, user_id, status, message, decision_message,"
        " requested_at) SELECT competition_id, user_id, 'approved', '', '', joined_at"
        " FROM team_members"
    )


def downgrade() -> None:
    for table in (
        'webhook_attempts', 'webhook_deliveries', 'webhook_endpoints', 'notification_settings',
        'notifications', 'event_marks', 'events', 'announcements', 'registrations',
    ):
        op.drop_table(table)
    with op.batch_alter_table('competitions') as batch:
        for column in ('rules_version', 'rules', 'deny', 'allow', 'registration'):
            batch.drop_column(column)
