"""`podium simulate-attack`: a host runs the attack against the board they are considering."""

import json
import subprocess
import sys


def podium(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_the_attack_climbs_the_exact_board_and_not_the_ladder():
    done = podium(
        "simulate-attack", "--n-public", "4000", "--submissions", "1000", "--seeds", "3", "--json"
    )
    assert done.returncode == 0, done.stderr
    rows = {row["board"]: row for row in json.loads(done.stdout)}
    assert set(rows) == {"exact", "ladder", "ladder_free"}
    assert rows["exact"]["final_mean"] > 0.58
    assert rows["ladder"]["final_mean"] < 0.532
    assert rows["ladder_free"]["final_mean"] < 0.532


def test_one_board_prints_a_table():
    done = podium("simulate-attack", "--board", "ladder", "--submissions", "200", "--seeds", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].split()[:2] == ["board", "final"]
    assert lines[2].split()[0] == "ladder" and len(lines) == 3


def test_bad_settings_exit_2_naming_them():
    done = podium("simulate-attack", "--n-public", "3", "--step", "2")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --n-public must be at least 10; --step must be between 0 and 1"
    )
