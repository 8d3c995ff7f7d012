"""What a code run costs: the jail's start-up and teardown for an empty script, and a 1M-row
prediction written by code in the jail against the same file arriving as an upload.

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
        site = _bare_jail([sys.executable, "-c", "pass"], args.runs)
        print(f"  python with site-packages inside : {_percentiles(site)}")
        # The yardstick: how fast this machine starts Python at all right now (a busy machine
        # inflates every figure above by about the same factor).
        bare = _outside([sys.executable, "-I", "-S", "-c", "pass"], args.runs)
        print(f"  python -S with no jail, for scale: {_percentiles(bare)}")

        took, output = _run(tmp, PREDICT.format(rows=args.rows))
        assert output is not None
        size = output.stat().st_size
        upload = tmp / "uploaded.csv"
        started = time.perf_counter()
        # An upload's bytes arrive and are written once; the same bytes, from the page cache.
        shutil.copyfile(output, upload)
        copied = time.perf_counter() - started
        script = tmp / "predict.py"
        script.write_text(PREDICT.format(rows=args.rows))
        started = time.perf_counter()
        subprocess.run([sys.executable, str(script)], cwd=tmp, check=True)
        plain = time.perf_counter() - started
        print(
            f"{args.rows:,} rows ({size / 1024**2:.1f} MB): written by code in the jail "
            f"{took:.2f} s (the same script with no jail {plain:.2f} s); the same file stored "
            f"as an upload {copied * 1000:.1f} ms (x{took / max(copied, 1e-9):.0f})"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
