"""Server-rendered pages: the competitions and their public leaderboards, readable without a token."""
