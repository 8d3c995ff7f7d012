"""Podium: a self-hosted evaluation service for machine-learning competitions."""

__version__ = "0.1.0"
