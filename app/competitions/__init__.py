"""Competitions: their configuration, hidden answer keys and sample submissions."""
