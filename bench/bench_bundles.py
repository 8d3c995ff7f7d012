"""Issue 25's bundle reader: how long a bundle takes to read, how its peak memory compares with
its unpacked size, and how fast hostile bundles are refused.

    python bench/bench_bundles.py              # a 64 MB Codabench bundle, then the attacks
    python bench/bench_bundles.py --mb 256

Peak memory is this process's ``ru_maxrss`` growth (Linux, KiB), measured in a fresh child per
case so that one case's peak does not hide the next.
"""

import argparse
import io
import multiprocessing
import resource
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.bundles import BundleError, Limits, export_codabench, read_bundle  # noqa: E402
from tests.bundles.builders import codabench_files, make_zip  # noqa: E402

MB = 1 << 20


def big_bundle(mb: int) -> bytes:
    files = codabench_files()
    rows = b"".join(b"%d,%d.5\n" % (i, i % 97) for i in range(mb * MB // 10))
    files["reference_data/valid/iris_valid.solution"] = rows[: mb * MB]
    return make_zip(files)


def bomb(mb: int) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("competition.yaml", "w", force_zip64=True) as stream:
            for _ in range(mb):
                stream.write(bytes(MB))
    return out.getvalue()


def measure(name: str, data: bytes, limits: Limits, queue: "multiprocessing.Queue[str]") -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        competition = read_bundle(data, limits=limits)
        read_seconds = time.perf_counter() - start
        export = export_codabench(competition)
        outcome = (
            f"read in {read_seconds:.2f} s, {len(competition.phases)} phases; "
            f"exported {len(export.data) / MB:.1f} MB"
        )
    except BundleError as exc:
        outcome = f"refused: {exc.detail[:70]}"
    seconds = time.perf_counter() - start
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    queue.put(
        f"{name:<28} {len(data) / MB:8.1f} MB zip {seconds:7.2f} s  +{peak:7.1f} MB peak  {outcome}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=64)
    args = parser.parse_args()
    cases = [
        (
            f"codabench, {args.mb} MB key",
            big_bundle(args.mb),
            Limits(max_total_bytes=4 * args.mb * MB),
        ),
        ("zip bomb, 1 GB of zeros", bomb(1024), Limits(max_total_bytes=64 * MB)),
        ("50,000 entries", make_zip({f"f{i}": b"" for i in range(50_000)}), Limits()),
    ]
    context = multiprocessing.get_context("fork")
    for name, data, limits in cases:
        queue: multiprocessing.Queue[str] = context.Queue()
        child = context.Process(target=measure, args=(name, data, limits, queue))
        child.start()
        print(queue.get())
        child.join()


if __name__ == "__main__":
    main()
