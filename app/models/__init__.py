"""SQLAlchemy tables, one module per aggregate. Importing this package registers them all."""

from app.models.account import LinkSecret, OidcIdentity, OutboundMail, SiteAuditEntry
from app.models.audit import AuditEntry
from app.models.backup import BackupSchedule
from app.models.competition import AnswerKey, Competition
from app.models.counter import SharedCounter
from app.models.datafile import DataFile
from app.models.event import (
    Event,
    EventMark,
    Notification,
    NotificationSettings,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
)
from app.models.host import CompetitionHost, FormerHost, HostRole
from app.models.ledger import LedgerEntry, LedgerHead
from app.models.phase import Phase
from app.models.registration import Announcement, Registration, RegistrationStatus
from app.models.reproduction import Reproduction
from app.models.simulation import AgentRating, Episode, EpisodeAgent
from app.models.standing import BoardRevision, Standing
from app.models.stats import BoardBands, ScoreStats
from app.models.submission import Score, Submission, SubmissionStatus
from app.models.team import InvitationStatus, Team, TeamInvitation, TeamMember, TeamNotice
from app.models.user import ApiToken, Role, User, UserState, WebSession

__all__ = [
    "BackupSchedule",
    "Reproduction",
    "AgentRating",
    "Episode",
    "EpisodeAgent",
    "Announcement",
    "Event",
    "EventMark",
    "Notification",
    "NotificationSettings",
    "Registration",
    "RegistrationStatus",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "AnswerKey",
    "LinkSecret",
    "OidcIdentity",
    "OutboundMail",
    "SiteAuditEntry",
    "UserState",
    "AuditEntry",
    "BoardBands",
    "InvitationStatus",
    "TeamInvitation",
    "ApiToken",
    "Competition",
    "CompetitionHost",
    "DataFile",
    "FormerHost",
    "HostRole",
    "LedgerEntry",
    "LedgerHead",
    "Phase",
    "Role",
    "Score",
    "ScoreStats",
    "SharedCounter",
    "Submission",
    "BoardRevision",
    "Standing",
    "SubmissionStatus",
    "Team",
    "TeamMember",
    "TeamNotice",
    "User",
    "WebSession",
]
