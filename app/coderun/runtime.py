"""What a participant's code can count on: the server's Python and the packages installed with it.

The jail runs the server's own interpreter and site-packages, read-only; this lists their versions
(``GET /api/v1/runtime``, the competition page) and fingerprints them, so that a run records which
runtime produced its file and a re-run can tell whether it changed.
"""

import hashlib
import importlib.metadata
import json
import platform
import sys
from functools import lru_cache
from typing import Any

# The packages a host can count on (the list, then what notebooks commonly import). Each
# is reported by its distribution name, with None where it is not installed.
PACKAGES = (
    "numpy",
    "pandas",
    "scikit-learn",
    "scipy",
    "pyarrow",
    "nbclient",
    "nbformat",
    "ipykernel",
)


@lru_cache(maxsize=1)
def runtime_info() -> dict[str, Any]:
    """Python's version and implementation, the machine, and each package's version."""
    packages: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            packages[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            packages[name] = None
    return {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "machine": platform.machine(),
        "packages": packages,
    }


@lru_cache(maxsize=1)
def runtime_fingerprint() -> str:
    """sha256 of :func:`runtime_info` together with every installed distribution and version,
    so a package changed underneath changes it too."""
    everything = sorted(
        f"{dist.metadata['Name']}=={dist.version}" for dist in importlib.metadata.distributions()
    )
    document = json.dumps([runtime_info(), everything], sort_keys=True).encode()
    return hashlib.sha256(document).hexdigest()
