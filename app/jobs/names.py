"""Celery's task and queue names, a leaf both the enqueuing side and the workers import (the
server enqueues without importing Celery)."""

SCORE_TASK = "podium.score_submission"
SWEEP_TASK = "podium.sweep"
# A code submission's run: routed to a queue of its own, so hosts can give runs their own workers.
CODE_TASK = "podium.run_code"
CODE_QUEUE = "code"
# A simulation phase's ladder episode: on the code lane too (agents run in the jail).
EPISODE_TASK = "podium.play_episode"
# Celery's default queue, where every other task goes.
DEFAULT_QUEUE = "celery"
