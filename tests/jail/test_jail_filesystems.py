"""What a jailed process may write, for every caller of the jail (custom metrics, code runs):
only its bounded in-memory folders; /dev and the system are read-only.

bubblewrap's own /dev is a tmpfs of half the machine's memory, writable by the jail's user, and
files there are not address space: a metric under RLIMIT_AS alone could have filled the server's
memory through it. Each probe runs first in the jail without the line that bounds it, where
it writes what it likes: that proves the probe would see the hole.
"""

import subprocess
import sys
import uuid

import pytest

from app.jail.bwrap import JailUnavailable, check_jail, jail_command, jail_user
from tests.conftest import skip_or_fail

MIB = 1024**2
SMALL = 8 * MIB
PROBE = """
import os, sys
folder, megabytes = sys.argv[1], int(sys.argv[2])
written = 0
try:
    with open(os.path.join(folder, sys.argv[3]), "wb") as out:
        for _ in range(megabytes):
            out.write(b"\\0" * (1024 * 1024))
            out.flush()
            written += 1
except OSError as exc:
    print(written, exc.strerror)
else:
    print(written, "ok")
finally:
    try:
        os.unlink(os.path.join(folder, sys.argv[3]))
    except OSError:
        pass
with open("/dev/null", "wb") as null:  # devices still work on the read-only /dev
    null.write(b"x")
"""


@pytest.fixture(scope="module")
def jailed() -> None:
    try:
        check_jail()
    except JailUnavailable as exc:
        skip_or_fail(f"the jail cannot start here: {exc}")


def _edit(argv: list[str], old: tuple[str, ...], new: tuple[str, ...]) -> list[str]:
    """``argv`` with its first run of the arguments ``old`` (which must be there) made ``new``."""
    for at in range(len(argv)):
        if argv[at : at + len(old)] == list(old):
            return argv[:at] + list(new) + argv[at + len(old) :]
    raise AssertionError(f"{old} is not in the jail's command")


def _write(
    folder: str, megabytes: int, *, edit: tuple[tuple[str, ...], tuple[str, ...]] | None = None
) -> str:
    name = f"probe-{uuid.uuid4().hex}"
    command = [sys.executable, "-I", "-S", "-c", PROBE, folder, str(megabytes), name]
    argv = jail_command(command, files={}, env={}, tmp_bytes=SMALL)
    if edit:
        argv = _edit(argv, *edit)
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=60, check=True, **jail_user()
    )
    return done.stdout.strip()


def test_dev_shm_holds_only_its_bounded_size(jailed: None) -> None:
    unbounded = (("--size", str(SMALL), "--tmpfs", "/dev/shm"), ("--tmpfs", "/dev/shm"))
    assert _write("/dev/shm", 16, edit=unbounded) == "16 ok"
    written, reason = _write("/dev/shm", 16).split(" ", 1)
    assert int(written) <= SMALL // MIB and reason == "No space left on device"


def test_dev_itself_is_read_only(jailed: None) -> None:
    assert _write("/dev", 16, edit=(("--remount-ro", "/dev"), ())) == "16 ok"
    assert _write("/dev", 16) == "0 Read-only file system"


def test_tmp_holds_only_its_bounded_size(jailed: None) -> None:
    unbounded = (("--size", str(SMALL), "--tmpfs", "/tmp"), ("--tmpfs", "/tmp"))
    assert _write("/tmp", 16, edit=unbounded) == "16 ok"
    written, reason = _write("/tmp", 16).split(" ", 1)
    assert int(written) <= SMALL // MIB and reason == "No space left on device"
