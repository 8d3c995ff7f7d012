"""Starting a jailed command, reading what it writes within budgets, and killing all it started.

A jailed command is bubblewrap (or, for a custom metric's development opt-out, a plain child)
started in a session of its own, so that one ``killpg`` reaches it and every process it left in
that group; in the jail, killing bubblewrap takes its whole PID namespace with it, however a
process there forked or detached. Every pipe is read by a thread that keeps at most a budget of
bytes and drains the rest, so a flood of output can neither fill the server's memory nor block
the child on a full pipe.
"""

import os
import select
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from io import BufferedReader
from pathlib import Path
from typing import IO, Any

_CHUNK = 65536


def start(
    argv: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None = None,
    stdout: int | IO[Any],
    stderr: int | IO[Any],
    pass_fds: Sequence[int] = (),
    user: Mapping[str, Any] | None = None,
) -> "subprocess.Popen[bytes]":
    """``argv`` started with no stdin in a new session (its own process group)."""
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env=dict(env),
        pass_fds=tuple(pass_fds),
        start_new_session=True,  # its own process group, so one kill reaches its children too
        **dict(user or {}),
    )


def wait_then_kill(process: "subprocess.Popen[bytes]", timeout: float) -> bool:
    """Wait up to ``timeout`` seconds, then kill the process group whatever happened; return
    whether the time ran out."""
    timed_out = False
    try:
        timed_out = not _exits_within(process, timeout)
    finally:
        # Also after a normal exit: nothing the code started may outlive its run. In the jail,
        # killing bubblewrap takes the whole PID namespace with it.
        kill_group(process.pid)
        process.wait()
    return timed_out


def _exits_within(process: "subprocess.Popen[bytes]", timeout: float) -> bool:
    """Whether the process ends within ``timeout`` seconds. Woken by the kernel through a pidfd
    the moment it ends (``Popen.wait(timeout)`` polls, up to 50 ms late: a tenth of a short run),
    else by ``Popen.wait``."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # not Linux >= 5.3, or already reaped
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        return bool(poller.poll(max(0, int(timeout * 1000))))
    finally:
        os.close(pidfd)


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class BoundedReader(threading.Thread):
    """Reads a pipe to its end, keeping at most ``limit`` bytes (the rest is read and dropped)."""

    def __init__(
        self, stream: BufferedReader, limit: int, *, name: str = "podium-jail-result"
    ) -> None:
        super().__init__(daemon=True, name=name)
        self._stream, self._limit = stream, limit
        self._chunks: list[bytes] = []
        self._kept = 0
        self.overflowed = False
        self.start()

    def run(self) -> None:
        with self._stream:
            while chunk := self._stream.read1(_CHUNK):
                if self._kept + len(chunk) > self._limit:
                    self.overflowed = True
                    continue
                self._chunks.append(chunk)
                self._kept += len(chunk)

    def data(self) -> bytes:
        return b"" if self.overflowed or self.is_alive() else b"".join(self._chunks)


class HeadTailReader(threading.Thread):
    """Reads a pipe to its end, keeping its first ``head`` bytes and its last ``tail`` bytes:
    where a long log went wrong is usually at its start or at its end."""

    def __init__(self, stream: BufferedReader, *, head: int, tail: int) -> None:
        super().__init__(daemon=True, name="podium-jail-log")
        self._stream, self._head_limit, self._tail_limit = stream, head, tail
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_bytes = 0
        self.total = 0
        self.start()

    def run(self) -> None:
        with self._stream:
            while chunk := self._stream.read1(_CHUNK):
                self.total += len(chunk)
                room = self._head_limit - len(self._head)
                if room > 0:
                    self._head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self._tail.append(chunk)
                    self._tail_bytes += len(chunk)
                    while self._tail_bytes - len(self._tail[0]) >= self._tail_limit:
                        self._tail_bytes -= len(self._tail.popleft())

    def head(self) -> bytes:
        return bytes(self._head)

    def tail(self) -> bytes:
        """The last ``tail`` bytes after the head (fewer when the whole log was shorter)."""
        return b"".join(self._tail)[-self._tail_limit :] if self._tail_limit else b""


class FileSink(threading.Thread):
    """Copies a pipe into ``path``, at most ``limit`` bytes; past that it drains and drops the
    rest and sets ``overflowed`` (the file then holds only the first ``limit`` bytes)."""

    def __init__(self, stream: BufferedReader, path: Path, limit: int) -> None:
        super().__init__(daemon=True, name="podium-jail-file")
        self._stream, self._path, self._limit = stream, path, limit
        self.written = 0
        self.overflowed = False
        self.start()

    def run(self) -> None:
        with self._stream, open(self._path, "wb") as out:
            while chunk := self._stream.read1(_CHUNK):
                if self.overflowed or self.written + len(chunk) > self._limit:
                    self.overflowed = True
                    continue
                out.write(chunk)
                self.written += len(chunk)
