"""Webhooks: hosts' endpoints per competition, a reader of the events stream that turns events
into deliveries, and a sender that signs them per the Standard Webhooks specification."""
