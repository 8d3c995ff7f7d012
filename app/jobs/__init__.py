"""Scoring jobs and the queues that run them: claim a submission under a lease, score it with the
engine (:mod:`app.scoring`) outside any transaction, record the outcome; the thread, eager and
Celery queues, the sweep, and rescoring after a key fix. The engine never imports this package."""
