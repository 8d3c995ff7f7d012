"""Public and private leaderboards, computed from the published answer-key version."""
