"""The scoring program Podium writes into an exported Codabench bundle (``score.py``): numpy and the
standard library only, so that it runs in Codabench's default image as well as here."""
