"""Simulation competitions' engine: Kaggle's environments (``kaggle-environments``, unchanged),
agents in the jail, one episode between them, skill ratings and the ladder's choice of who plays
whom. Nothing here touches the database: :mod:`app.jobs.episodes` runs episodes as jobs,
:mod:`app.episodes` serves them, :mod:`app.leaderboard.simulation` ranks the agents."""
