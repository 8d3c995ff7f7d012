"""Honest leaderboards in the service: what the Ladder shows participants, the intervals the
scoring job adds after each score, and rank bands. Comparisons and the shake-up report, built on
these, are in :mod:`app.honest.analysis`; the statistics themselves live in the pure engine,
:mod:`app.honest.engine`."""
