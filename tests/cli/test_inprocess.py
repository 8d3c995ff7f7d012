"""The in-process runner (tests/cli/inprocess.py) says so when a run did what a real process
would have done differently (tests/cli/test_worker.py shows it puts logging back)."""

import os
import warnings

import pytest

from tests.cli.inprocess import InProcessDifference, run_main
from tests.databases import migrated


def test_a_run_that_hashes_a_password_under_another_env_warns(tmp_path):
    url = f"sqlite:///{tmp_path}/users.db"
    migrated(url)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODIUM_")}
    env.update(PODIUM_DATABASE_URL=url, PODIUM_SECRET_KEY="in-process-secret-key-0123456789")
    with pytest.warns(InProcessDifference, match=r"PODIUM_ENV=\(unset\) would hash"):
        made = run_main("users", "create", "ada", "--password", env=env, stdin="a passphrase\n")
    assert made.returncode == 0, made.stderr
    # The control: under the suite's own PODIUM_ENV the run hashes as a process would.
    env["PODIUM_ENV"] = os.environ["PODIUM_ENV"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", InProcessDifference)
        again = run_main("users", "create", "bea", "--password", env=env, stdin="a passphrase\n")
    assert again.returncode == 0, again.stderr
