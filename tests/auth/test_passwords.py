"""The password hasher's cost: the recommended Argon2id everywhere but the test suite, and the
wiring that picks it when the module is imported (in a process of its own)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.auth.passwords import _hasher_for


@pytest.mark.parametrize("env", [None, "development", "production"])
def test_every_environment_but_tests_hashes_at_the_recommended_cost(env):
    hashed = _hasher_for(env).hash("correct horse battery")
    assert hashed.startswith("$argon2id$")
    assert "m=65536,t=3,p=4" in hashed


def test_the_suites_cheap_hashes_are_still_argon2id_and_verify_anywhere():
    cheap = _hasher_for("test").hash("correct horse battery")
    assert cheap.startswith("$argon2id$") and "m=1024,t=1,p=1" in cheap
    # A check reads the cost from the stored hash: each hasher verifies the other's.
    recommended = _hasher_for("production")
    assert recommended.verify("correct horse battery", cheap)
    assert not recommended.verify("wrong horse battery", cheap)
    assert _hasher_for("test").verify(
        "correct horse battery", recommended.hash("correct horse battery")
    )


# The hasher is chosen once, when app.auth.passwords is imported; this suite's processes all run
# under PODIUM_ENV=test, so only a process started without it shows what a deployment hashes
# with. One process for both environments keeps the cost to one interpreter start.
_WIRING = """
import importlib, json, os, sys
import app.auth.passwords as passwords

seen = {}
for env in sys.argv[1:]:
    if env == "unset":
        os.environ.pop("PODIUM_ENV", None)
    else:
        os.environ["PODIUM_ENV"] = env
    module = importlib.reload(passwords)
    checked = []
    real_verify = module._hasher.verify
    module._hasher.verify = lambda password, hashed: checked.append(hashed) or real_verify(
        password, hashed
    )
    refused = module.verify_password("correct horse battery", None)
    seen[env] = {"hash": module.hash_password("correct horse battery"),
                 "dummy": module._DUMMY_HASH, "checked": checked, "refused": not refused}
print(json.dumps(seen))
"""


@pytest.mark.slow
def test_a_process_started_outside_the_suite_hashes_and_checks_unknown_users_at_full_cost():
    env = {k: v for k, v in os.environ.items() if k != "PODIUM_ENV"}
    done = subprocess.run(
        [sys.executable, "-c", _WIRING, "unset", "production", "test"],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(done.stdout)
    for env_name in ("unset", "production"):
        wired = seen[env_name]
        assert "m=65536,t=3,p=4" in wired["hash"], env_name
        # An unknown user is checked against a hash of the same cost as a real user's, so a
        # wrong name takes as long as a wrong password.
        assert "m=65536,t=3,p=4" in wired["dummy"] and wired["checked"] == [wired["dummy"]]
        assert wired["refused"]
    # The control: the same process under PODIUM_ENV=test takes the cheap hasher.
    assert "m=1024,t=1,p=1" in seen["test"]["hash"] and "m=1024,t=1,p=1" in seen["test"]["dummy"]
