"""Board reads run side by side, with a bound on how many a process holds at once.

A board read (the API's page and CSV, the web board pages, the kaggle client's leaderboard calls)
is cheap: the whole-board CSV comes from the rendered cache (:mod:`app.leaderboard.cache`, one
revision read), a page is one SQL statement over the materialised standings. So board reads need
no queue of their own: they go in at once, concurrently, and wait for a database slot with every
other request (:mod:`app.deps`), in turn. What the gate bounds is overload: past
``board_concurrency`` board reads in flight in one process, a board read is answered 503 with
``Retry-After`` at once, so a flood of readers costs a bounded amount of memory and an upload
behind them waits for a bounded number of short reads.

A plain ASGI middleware, like :mod:`app.http.upload_guard`: it sees the path before any routing.
"""

import re

from starlette.types import ASGIApp, Receive, Scope, Send

from app.errors import ServiceUnavailable, error_response

# The kaggle client sends absolute-form targets (http://host/api/...), which
# app.kaggle.proxy.AbsoluteFormTargets makes origin-form before this gate sees them; the pattern
# takes both, so the gate works wherever it is placed.
BOARD_ROUTES = re.compile(
    r"^(https?://[^/]+)?"
    r"(/api/v1/competitions/[^/]+/leaderboard(\.csv)?"
    r"|/c/[^/]+(/leaderboard)?"
    r"|/api/v1/competitions\.CompetitionApiService/(GetLeaderboard|DownloadLeaderboard))/?$"
)


class BoardGate:
    def __init__(self, app: ASGIApp, *, most: int) -> None:
        if most < 1:
            raise ValueError("a board gate must let at least one board read in")
        self.app = app
        self.most = most
        # One process, one event loop: a plain count is enough (no await between read and write).
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not BOARD_ROUTES.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.most:
            busy = ServiceUnavailable(
                "too many leaderboard reads at once; try again in a moment",
                reason="board_busy",
                retry_after=1,
            )
            await error_response(busy)(scope, receive, send)
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
