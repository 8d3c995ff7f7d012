"""Hypothesis settings for the metric tests: enough examples to find edge cases, bounded time."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "metrics",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("metrics")
