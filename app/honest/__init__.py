"""Honest leaderboards, in three rooms:

- :mod:`app.honest.engine`: the statistics, pure numpy (the Ladder, bootstrap intervals, paired
  comparisons, rank bands, the shake-up); nothing there imports the web, the database or settings;
- :mod:`app.honest.board`: the service that boards and submission views read (the Ladder's
  released values, each row's interval and band, stored replicates);
- :mod:`app.honest.analysis`: the on-demand analyses behind their routes (compare A with B, the
  shake-up report).

The scoring queue's step that computes and stores the figures after each score is
:mod:`app.jobs.honest`.
"""
