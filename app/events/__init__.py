"""The one stream of events (``../shared/people-model.md``): written with each fact, read by
notifications and webhooks (and, later, the record), each reader at its own pace."""
