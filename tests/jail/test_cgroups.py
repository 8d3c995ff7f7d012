"""A run joins every control group it was given before it becomes the jailed command."""

import subprocess
from pathlib import Path

from app.jail.cgroups import Cgroup


def test_the_wrapper_joins_each_group_then_runs_the_command(tmp_path: Path):
    paths = [tmp_path / name for name in ("pids", "memory", "cpu")]
    for path in paths:
        path.mkdir()
    argv = Cgroup(paths).wrap(["/bin/sh", "-c", 'echo "$$ $1"', "sh", "the argument"])
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    pid, argument = done.stdout.strip().split(" ", 1)
    assert argument == "the argument"
    for path in paths:  # the same process (exec), in every group
        assert (path / "cgroup.procs").read_text().strip() == pid


def test_no_memory_group_counts_no_oom_kill(tmp_path: Path):
    assert Cgroup([tmp_path]).oom_kills() == 0
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert Cgroup([memory], memory_path=memory).oom_kills() == 2
