"""Board reads take turns, so board traffic cannot crowd uploads and scoring out of a process.

A board request (the API's page and CSV, the web board pages, the kaggle client's leaderboard
calls) waits for one of ``board_concurrency`` places before anything runs for it. Nothing is held
while it waits (no thread of the pool, no database slot, no session), so a crowd of readers
queues among itself while an upload goes straight through; a board page costs a few
milliseconds, so one or two places serve hundreds of reads a second. At most
``board_queue`` requests wait per process; past that a board read is answered 503 with
``Retry-After`` at once, so a flood of readers costs a bounded amount of memory.

A plain ASGI middleware, like :mod:`app.http.upload_guard`: it sees the path before any routing.
"""

import asyncio
import re
import weakref

from starlette.types import ASGIApp, Receive, Scope, Send

from app.errors import ServiceUnavailable, error_response

# The kaggle client sends absolute-form targets (http://host/api/...), which this middleware sees
# before app.kaggle.proxy rewrites them.
BOARD_ROUTES = re.compile(
    r"^(https?://[^/]+)?"
    r"(/api/v1/competitions/[^/]+/leaderboard(\.csv)?"
    r"|/c/[^/]+(/leaderboard)?"
    r"|/api/v1/competitions\.CompetitionApiService/(GetLeaderboard|DownloadLeaderboard))/?$"
)


class BoardGate:
    def __init__(self, app: ASGIApp, *, places: int, queue: int) -> None:
        if places < 1 or queue < 0:
            raise ValueError("a board gate needs at least one place and a queue of zero or more")
        self.app = app
        self.places = places
        self.queue = queue
        # One semaphore per event loop (a test client runs a loop of its own per client).
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._waiting = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not BOARD_ROUTES.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            slots = self._slots[loop] = asyncio.Semaphore(self.places)
        if slots.locked() and self._waiting >= self.queue:
            busy = ServiceUnavailable(
                "too many leaderboard reads are waiting; try again in a moment",
                reason="board_busy",
                retry_after=1,
            )
            await error_response(busy)(scope, receive, send)
            return
        self._waiting += 1
        try:
            await slots.acquire()
        finally:
            self._waiting -= 1
        try:
            await self.app(scope, receive, send)
        finally:
            slots.release()
