"""A real HTTP receiver on loopback for webhook tests: it records each request and answers as
its script says (a status, or a stall longer than the sender's timeout)."""

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    # Each request takes the next answer: an int status, or "stall" (no answer for a while);
    # when the script runs out, 200.
    script: list[int | str] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    stall_seconds: float = 3.0

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                receiver.received.append(
                    Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                answer = receiver.script.pop(0) if receiver.script else 200
                if answer == "stall":
                    time.sleep(receiver.stall_seconds)
                    answer = 200
                self.send_response(int(answer))
                if 300 <= int(answer) < 400:
                    self.send_header(
                        "Location", f"http://127.0.0.1:{self.server.server_port}/moved"
                    )
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
