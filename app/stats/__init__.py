"""Honest leaderboards in the service: what the Ladder shows participants, the intervals the
scoring queue adds after each score, rank bands, comparisons and the shake-up report. The
statistics themselves live in the pure engine, :mod:`app.honest`."""
