"""Podium's participant client: the HTTP calls behind `podium login`, `podium submit` and the rest."""
