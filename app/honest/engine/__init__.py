"""Honest leaderboards: the Ladder against probing, bootstrap intervals, paired comparisons,
rank bands and the shake-up report.

Pure numpy, like ``app.metrics``: nothing here imports the web layer, the database or settings.
"""
