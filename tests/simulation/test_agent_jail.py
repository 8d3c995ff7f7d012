"""Agents that attack: each attack is tried outside the jail first (a plain process of the same
Python: it works there), then as an agent in a ConnectX episode, where it is bounded and named."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from app.simulation.environments import EnvironmentConfig
from app.simulation.episode import run_episode
from app.simulation.jailed import AgentLimits
from tests.simulation.agents import RANDOM

pytestmark = pytest.mark.slow

CONNECTX = EnvironmentConfig(name="connectx", configuration={"actTimeout": 1})
LIMITS = AgentLimits(memory_mb=256, max_processes=32, max_answer_bytes=64 * 1024, load_seconds=30)
OBSERVATION = {"board": [0] * 42, "mark": 1, "remainingOverageTime": 1, "step": 0}
CONFIGURATION = {"columns": 7, "rows": 6, "inarow": 4, "actTimeout": 1}

ATTACKS = {
    # Prints 8 MB in one step.
    "prints": """
        def agent(observation, configuration):
            print("x" * (8 * 1024 * 1024))
            return 0
    """,
    # Holds 64 children at once (a fork bomb's start), answers how many it made.
    "forks": """
        import os, time
        def agent(observation, configuration):
            made = 0
            for _ in range(64):
                try:
                    pid = os.fork()
                except OSError:
                    break
                if pid == 0:
                    time.sleep(5)
                    os._exit(0)
                made += 1
            return made
    """,
    # Allocates 1 GB and touches it.
    "allocates": """
        def agent(observation, configuration):
            block = bytearray(1024 ** 3)
            block[:: 4096] = b"x" * len(block[:: 4096])
            return 0
    """,
    # Reaches a server on the machine's loopback.
    "sockets": """
        import os, socket
        def agent(observation, configuration):
            with socket.create_connection(("127.0.0.1", int(os.environ.get("PORT", "9"))), 2):
                return 0
    """,
    # Sleeps past its step's time (actTimeout 1 s and an overage of 1 s), then answers.
    "sleeps": """
        import time
        def agent(observation, configuration):
            time.sleep(4)
            return 0
    """,
    # Answers with an action of 4 MB.
    "huge action": """
        def agent(observation, configuration):
            return "9" * (4 * 1024 * 1024)
    """,
}


@pytest.fixture
def agents(tmp_path: Path):
    """A folder the jail's user may read (pytest's own is its owner's only)."""
    root = Path(tempfile.mkdtemp(prefix="podium-agents-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _agent_dir(tmp_path: Path, name: str, source: str | bytes) -> Path:
    folder = tmp_path / name.replace(" ", "-")
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    text = source if isinstance(source, bytes) else textwrap.dedent(source).encode()
    (folder / "main.py").write_bytes(text)
    (folder / "main.py").chmod(0o644)
    return folder


def _outside(folder: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The agent called once in a plain process, as the server's user, with no limit."""
    harness = (
        "import json, sys; ns = {}; exec(open(sys.argv[1]).read(), ns); "
        "agent = [v for v in ns.values() if callable(v)][-1]; "
        f"a = agent({OBSERVATION!r}, {CONFIGURATION!r}); "
        "sys.stderr.write('ACTION BYTES %d\\n' % len(json.dumps(a)))"
    )
    return subprocess.run(
        [sys.executable, "-c", harness, str(folder / "main.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
        start_new_session=True,
    )


@pytest.fixture
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    yield server.getsockname()[1]
    server.close()


def test_each_attack_works_outside_the_jail(tmp_path, listener):
    prints = _outside(_agent_dir(tmp_path, "prints", ATTACKS["prints"]))
    assert len(prints.stdout) > 8 * 1024 * 1024
    forks = _outside(_agent_dir(tmp_path, "forks", ATTACKS["forks"]))
    assert "ACTION BYTES 2" in forks.stderr  # 64 children: "64"
    allocates = _outside(_agent_dir(tmp_path, "allocates", ATTACKS["allocates"]))
    assert allocates.returncode == 0, allocates.stderr
    sockets = _outside(
        _agent_dir(tmp_path, "sockets", ATTACKS["sockets"]), env={"PORT": str(listener)}
    )
    assert sockets.returncode == 0, sockets.stderr
    sleeps = _outside(_agent_dir(tmp_path, "sleeps", ATTACKS["sleeps"]))
    assert "ACTION BYTES 1" in sleeps.stderr, sleeps.stderr  # it answers, after its sleep
    huge = _outside(_agent_dir(tmp_path, "huge", ATTACKS["huge action"]))
    assert f"ACTION BYTES {4 * 1024 * 1024 + 2}" in huge.stderr


@pytest.mark.parametrize(
    ("attack", "words"),
    [
        ("prints", None),
        ("forks", "refused its action"),
        # A memory group kills it (where the machine allows one), else RLIMIT_AS raises.
        ("allocates", ("memory limit of 256 MB", "MemoryError")),
        ("sockets", "the agent raised"),
        ("sleeps", "did not answer within actTimeout"),
        ("huge action", "larger than 65536 bytes"),
    ],
)
def test_an_attacking_agent_is_bounded_and_named_in_the_jail(jail, agents, attack, words):
    attacker = _agent_dir(agents, attack, ATTACKS[attack])
    opponent = _agent_dir(agents, "random", RANDOM)
    outcome = run_episode(CONNECTX, [attacker, opponent], LIMITS, overage_seconds=1)
    seat = outcome.agents[0]
    if attack == "prints":
        # Kaggle's maxLogLength per step; the episode goes on.
        assert seat.status in ("DONE", "INVALID"), seat.reason
        first = next(step for step in seat.steps if step)
        assert len(first["stdout"]) == 1024
        assert len(json.dumps(seat.log_json())) < 200 * 1024
        return
    assert seat.status in ("ERROR", "INVALID", "TIMEOUT"), seat
    assert seat.reward is None
    assert any(w in (seat.reason or "") for w in ([words] if isinstance(words, str) else words))
    # As Kaggle scores it: the failed agent's reward is None (last), the other's is not.
    assert outcome.agents[1].status == "DONE"
    assert outcome.agents[1].reward is not None
