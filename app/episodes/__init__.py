"""Simulation episodes through the API: an agent's episodes, an episode's replay, a seat's log
(:mod:`app.jobs.episodes` plays them, :mod:`app.simulation` is the engine)."""
