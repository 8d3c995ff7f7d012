"""Notifications: a reader of the events stream that turns events into mails and notices on the
pages, by each user's preferences, with an unsubscribe link in every mail."""
