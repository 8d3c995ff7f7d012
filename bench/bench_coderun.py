"""What a code run costs: the jail's start-up and teardown for an empty script, and a 1M-row
prediction written by code in the jail and scored, against the same file uploaded and scored.

The tests (``tests/coderun/test_coderun_jail.py``) assert what a run may and may not do; this
prints how long it takes. The goal for the empty script is p50 <= 150 ms (the issue's figure).

    python bench/bench_coderun.py
    python bench/bench_coderun.py --runs 30 --rows 1000000
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.coderun.limits import CodeLimits  # noqa: E402
from app.coderun.runner import InputFile, run_code  # noqa: E402
from app.coderun.runtime import runtime_fingerprint  # noqa: E402
from app.jail.bwrap import check_jail, jail_command, jail_user  # noqa: E402
from app.metrics import get_metric  # noqa: E402
from app.scoring.core import load_key, score_submission_file  # noqa: E402

LIMITS = CodeLimits(wall_seconds=300, memory_mb=2048, cpus=1, working_mb=512)
PREDICT = """
import numpy as np
import pandas as pd

rows = {rows}
rng = np.random.default_rng(0)
pd.DataFrame({{"id": np.arange(rows), "y": rng.random(rows)}}).to_csv(
    "submission.csv", index=False, float_format="%.6f"
)
"""


def _key(path: Path, rows: int) -> None:
    """An answer key for PREDICT's ids: half public, half private."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(1)
    usage = np.where(np.arange(rows) % 2 == 0, "Public", "Private")
    pd.DataFrame({"id": np.arange(rows), "y": rng.random(rows), "Usage": usage}).to_csv(
        path, index=False, float_format="%.6f"
    )


def _percentiles(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return (
        f"p50 {statistics.median(ordered) * 1000:7.1f} ms   p90 {p90 * 1000:7.1f} ms   "
        f"min {ordered[0] * 1000:7.1f} ms   (n={len(ordered)})"
    )


def _run(tmp: Path, source: str, limits: CodeLimits = LIMITS) -> tuple[float, Path | None]:
    folder = Path(tempfile.mkdtemp(dir=tmp))
    code = folder / "main.py"
    code.write_text(source)
    data = tmp / "test.csv"
    data.write_text("id\n1\n")
    started = time.perf_counter()
    outcome = run_code(
        code=code,
        filename="main.py",
        slug="bench",
        inputs=[InputFile("test.csv", data)],
        limits=limits,
        output_dir=folder,
        max_output_bytes=512 * 1024**2,
        max_code_bytes=20 * 1024**2,
    )
    took = time.perf_counter() - started
    if source.strip() != "pass" and outcome.failure is not None:
        raise SystemExit(
            f"the run failed: {outcome.failure}: {outcome.message}\n{outcome.log.text()}"
        )
    return took, outcome.output


def _outside(command: list[str], runs: int) -> list[float]:
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdin=subprocess.DEVNULL)
        seconds.append(time.perf_counter() - started)
    return seconds


def _bare_jail(command: list[str], runs: int) -> list[float]:
    argv = jail_command(command, files={}, env={"PATH": "/usr/bin:/bin"})
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, **jail_user())
        seconds.append(time.perf_counter() - started)
    return seconds


# What app/coderun/inside.py imports before it starts a script, and what it imported before
# it started the script by fork and exec and stopped reading and writing with json.
RUNNER_IMPORTS = "import ctypes, marshal, os, resource, stat, sys, _json, _signal"
RUNNER_IMPORTS_BEFORE = "import ctypes, json, os, re, resource, stat, subprocess, sys, typing"


def _grouped_jail(command: list[str], runs: int) -> list[float]:
    """As _bare_jail, with the run's control groups made, joined (a shell) and removed."""
    from app.jail.cgroups import run_cgroup

    argv = jail_command(command, files={}, env={"PATH": "/usr/bin:/bin"})
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        group = run_cgroup(memory_bytes=2048 * 1024**2, cpus=1, processes=64)
        if group is None:
            return []
        try:
            subprocess.run(group.wrap(argv), check=True, stdin=subprocess.DEVNULL, **jail_user())
        finally:
            group.remove()
        seconds.append(time.perf_counter() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    check_jail()
    runtime_fingerprint()  # once per process, as a server pays it
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="podium-bench-") as name:
        tmp = Path(name)
        _run(tmp, "pass")  # warm the page cache
        empty = [_run(tmp, "pass")[0] for _ in range(args.runs)]
        print(f"empty script, run_code end to end : {_percentiles(empty)}")
        bwrap = _bare_jail(["/bin/true"], args.runs)
        print(f"  of which bubblewrap + /bin/true  : {_percentiles(bwrap)}")
        python = _bare_jail([sys.executable, "-I", "-S", "-c", "pass"], args.runs)
        print(f"  a bare python -S inside the jail : {_percentiles(python)}")
        runner = _bare_jail([sys.executable, "-I", "-S", "-c", RUNNER_IMPORTS], args.runs)
        print(f"  python -S, the runner's imports  : {_percentiles(runner)}")
        before = _bare_jail([sys.executable, "-I", "-S", "-c", RUNNER_IMPORTS_BEFORE], args.runs)
        print(f"  python -S, the runner's old ones : {_percentiles(before)}")
        site = _bare_jail([sys.executable, "-c", "pass"], args.runs)
        print(f"  python with site-packages inside : {_percentiles(site)}")
        grouped = _grouped_jail(["/bin/true"], args.runs)
        if grouped:
            print(f"  bubblewrap + /bin/true in cgroups: {_percentiles(grouped)}")
        # The yardstick: how fast this machine starts Python at all right now (a busy machine
        # inflates every figure above by about the same factor).
        bare = _outside([sys.executable, "-I", "-S", "-c", "pass"], args.runs)
        print(f"  python -S with no jail, for scale: {_percentiles(bare)}")

        key_path = tmp / "key.csv"
        _key(key_path, args.rows)
        metric = get_metric("rmse")
        params = metric.parse_params(None)
        key = load_key(key_path, metric=metric, params=params, id_column="id", check=False)

        def scored(path: Path) -> float:
            return score_submission_file(path, metric=metric, params=params, key=key).score

        script = tmp / "predict.py"
        script.write_text(PREDICT.format(rows=args.rows))
        started = time.perf_counter()
        subprocess.run([sys.executable, str(script)], cwd=tmp, check=True)
        plain = time.perf_counter() - started

        # By code: the run in the jail writes submission.csv, then intake and the metric.
        started = time.perf_counter()
        ran, output = _run(tmp, PREDICT.format(rows=args.rows))
        assert output is not None
        by_code = scored(output)
        code_total = time.perf_counter() - started
        size = output.stat().st_size
        # Uploaded: the same bytes arrive and are written once (from the page cache here), then
        # the same intake and metric.
        upload = tmp / "uploaded.csv"
        started = time.perf_counter()
        shutil.copyfile(output, upload)
        stored = time.perf_counter() - started
        by_file = scored(upload)
        upload_total = time.perf_counter() - started
        assert by_code == by_file, (by_code, by_file)
        score_seconds = upload_total - stored
        print(
            f"{args.rows:,} rows ({size / 1024**2:.1f} MB), rmse {by_file:.6f} both ways:\n"
            f"  written by code in the jail, then scored : {code_total:6.2f} s "
            f"(run {ran:.2f} s, of which the script alone with no jail {plain:.2f} s)\n"
            f"  the same file uploaded, then scored      : {upload_total:6.2f} s "
            f"(stored {stored * 1000:.0f} ms, scored {score_seconds:.2f} s)\n"
            f"  ratio code / upload                      : x{code_total / upload_total:.1f}; "
            f"the jail's own share of the run x{ran / plain:.2f} of the bare script"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
