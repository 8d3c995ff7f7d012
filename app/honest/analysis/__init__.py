"""On-demand analyses of the stored score stats: is submission A better than B, and the shake-up
report of a closed competition. Built on the boards (:mod:`app.leaderboard`) and the stats."""
