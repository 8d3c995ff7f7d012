"""Server-rendered pages: competitions and their public leaderboards, readable without a token."""
