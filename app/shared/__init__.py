"""State that every API process must see alike: the limits that span requests.

With ``PODIUM_REDIS_URL`` the failed sign-ins and the upload rate are kept in Redis, each update
one atomic script (:mod:`app.shared.redis`). Without Redis, a PostgreSQL deployment (which may
run several processes) keeps the sign-in counters in the database (:mod:`app.shared.database`),
and SQLite (one process) keeps them in memory as before. When Redis stops answering, each
process counts in its own memory until it answers again, and ``/readyz`` says ``degraded``
(:mod:`app.shared.state`).
"""
