"""A host's own environment as uploaded: a zip laid out as ``kaggle-environments`` lays out its
own (``envs/connectx/``): ``<name>.json`` (the specification), ``<name>.py`` (``interpreter`` and
``renderer``, optionally ``html_renderer``) and optionally ``<name>.js`` (the replay's renderer),
at the zip's root. Read with every budget enforced while reading (entries, names, unpacked bytes,
links); its code only ever runs in the jail (:mod:`app.simulation.env_inside`)."""

import io
import json
import re
import stat
import zipfile
import zlib
from pathlib import Path

MAX_ENTRIES = 20
MAX_UNPACKED_BYTES = 16 * 1024**2
_NAME = re.compile(r"^([A-Za-z][A-Za-z0-9_]{0,63})\.(json|py|js)$")


class InvalidEnvironment(ValueError):
    """The upload is not an environment; the message says what to fix."""


def read_environment(data: bytes, dest: Path | None = None) -> str:
    """Check the zip (and with ``dest``, write its files there, readable by anyone: the jail's
    user reads them); return the environment's name."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError):
        raise InvalidEnvironment("the environment must be a .zip archive") from None
    with archive:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        if len(infos) > MAX_ENTRIES:
            raise InvalidEnvironment(f"the .zip holds {len(infos)} files; at most {MAX_ENTRIES}")
        files: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            mode = info.external_attr >> 16
            if info.flag_bits & 0x1 or stat.S_ISLNK(mode):
                raise InvalidEnvironment(f"'{info.filename[:100]}' is encrypted or a link")
            if not _NAME.match(info.filename):
                raise InvalidEnvironment(
                    f"'{info.filename[:100]}' is not <name>.json, <name>.py or <name>.js at the "
                    "zip's root"
                )
            files[info.filename] = info
        specs = sorted(n for n in files if n.endswith(".json"))
        if len(specs) != 1:
            raise InvalidEnvironment(
                f"the .zip needs exactly one <name>.json (the specification); it has {len(specs)}"
            )
        name = specs[0].removesuffix(".json")
        if f"{name}.py" not in files:
            raise InvalidEnvironment(f"the .zip has {name}.json but no {name}.py (its interpreter)")
        budget = [MAX_UNPACKED_BYTES]
        contents = {n: _read(archive, info, budget) for n, info in files.items()}
    try:
        specification = json.loads(contents[f"{name}.json"])
    except (ValueError, UnicodeDecodeError):
        raise InvalidEnvironment(f"{name}.json is not JSON") from None
    if not isinstance(specification, dict) or not isinstance(specification.get("agents"), list):
        raise InvalidEnvironment(f"{name}.json has no 'agents' list (the numbers of players)")
    if dest is not None:
        for filename, content in contents.items():
            target = dest / filename
            target.write_bytes(content)
            target.chmod(0o644)
    return name


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: list[int]) -> bytes:
    out = io.BytesIO()
    try:
        with archive.open(info) as member:
            while chunk := member.read(1 << 20):
                budget[0] -= len(chunk)
                if budget[0] < 0:
                    raise InvalidEnvironment(
                        f"the environment's files unpack to more than {MAX_UNPACKED_BYTES} bytes"
                    )
                out.write(chunk)
    except (zipfile.BadZipFile, NotImplementedError, EOFError, zlib.error) as exc:
        raise InvalidEnvironment(f"'{info.filename[:100]}' cannot be read: {exc}") from None
    return out.getvalue()
