"""moto's S3 server on a loopback port, started and stopped at will, and looks into its bucket."""

from typing import Any

from moto.server import ThreadedMotoServer

from app.config import Settings
from app.storage.s3 import client_for

BUCKET = "podium-test"
PART = 5 * 1024 * 1024  # S3's smallest part


class MotoS3:
    """moto's S3 server in a thread; ``stop`` closes its socket, so connecting is refused."""

    def __init__(self) -> None:
        self.port = 0
        self.server: ThreadedMotoServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()
        self.port = self.server.get_host_and_port()[1]  # the same port again on a restart

    def stop(self) -> None:
        if self.server is None:
            return
        self.server.stop()
        # moto's stop() leaves the socket listening: connections would hang, not be refused.
        self.server._server.server_close()  # type: ignore[union-attr]
        self.server = None


def store(settings: Settings) -> Any:
    return client_for(settings)


def keys(settings: Settings, prefix: str = "") -> list[str]:
    listed = store(settings).list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return sorted(item["Key"] for item in listed.get("Contents", []))
