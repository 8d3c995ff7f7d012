"""Raw-socket clients for tests of slow senders: a request whose headers promise a body that is
then sent only in part, and reading whatever the server answers on such a connection."""

import base64
import select
import socket
from urllib.parse import urlsplit


def held_request(
    url: str,
    method: str,
    path: str,
    *,
    declared: int = 1000,
    sent: bytes = b"x",
    headers: dict[str, str] | None = None,
    chunked: bool = False,
) -> socket.socket:
    """Open a connection, send the headers of a ``declared``-byte body and only ``sent`` of it."""
    parts = urlsplit(url)
    conn = socket.create_connection((parts.hostname, parts.port), timeout=60)
    lines = [f"{method} {path} HTTP/1.1", f"Host: {parts.netloc}"]
    if chunked:
        lines.append("Transfer-Encoding: chunked")
        body = f"{declared:x}\r\n".encode() + sent
    else:
        lines.append(f"Content-Length: {declared}")
        body = sent
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    return conn


def answered(conn: socket.socket) -> bool:
    """Whether the server has sent anything (or closed) on ``conn`` yet, without waiting."""
    conn.setblocking(False)
    try:
        return conn.recv(1, socket.MSG_PEEK) is not None
    except BlockingIOError:
        return False
    finally:
        conn.setblocking(True)


def status_line(conn: socket.socket, timeout: float = 60.0) -> str:
    """The first line the server answers on ``conn`` (waits at most ``timeout``: a hang guard)."""
    conn.settimeout(timeout)
    data = b""
    while b"\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode("latin-1")


def basic(name: str, token: str) -> str:
    return "Basic " + base64.b64encode(f"{name}:{token}".encode()).decode()


def pushed_until_answered(
    url: str,
    method: str,
    path: str,
    *,
    total: int,
    headers: dict[str, str] | None = None,
    chunked: bool = False,
    first: bytes = b"",
    timeout: float = 60.0,
) -> tuple[str, int]:
    """Send a ``total``-byte body as fast as the server takes it, stopping as soon as it answers
    (or closes). Returns the status line and how many body bytes were sent by then: what the
    server read, plus what the kernel's buffers held. ``first`` opens the body (a multipart
    part's headers, say)."""
    parts = urlsplit(url)
    conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # A small send buffer, so that what the client got to send is close to what the server read.
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32 * 1024)
    conn.settimeout(timeout)
    conn.connect((parts.hostname, parts.port))
    lines = [f"{method} {path} HTTP/1.1", f"Host: {parts.netloc}"]
    lines.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}")
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    piece = b"x" * 65536
    framed = f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if chunked else piece
    sent = 0
    try:
        opening = f"{len(first):x}\r\n".encode() + first + b"\r\n" if chunked and first else first
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + opening)
        while sent < total:
            readable, writable, _ = select.select([conn], [conn], [], timeout)
            if readable or not writable:
                break
            try:
                conn.sendall(framed)
            except OSError:  # the server answered and closed
                break
            sent += len(piece)
        else:
            if chunked:
                conn.sendall(b"0\r\n\r\n")
        return status_line(conn, timeout), sent
    finally:
        conn.close()
