"""Mail: written to the outbox table with the fact it tells, delivered later by the sender
(to an SMTP server, or to a folder under the data directory when none is configured)."""
