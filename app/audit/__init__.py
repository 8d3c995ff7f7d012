"""The audit log of organiser actions."""
