"""Reading, aligning and scoring prediction files, and the queues that run scoring jobs."""
