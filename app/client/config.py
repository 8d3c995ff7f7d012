"""Where the participant CLI keeps the server's URL and the user's token: a JSON file only the
user can read (mode 0600), overridden by PODIUM_URL and PODIUM_TOKEN."""

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.client.http import ClientError


@dataclass(frozen=True)
class Login:
    url: str
    token: str


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "podium" / "config.json"


def receipts_path(slug: str) -> Path:
    """Where ``podium submit`` keeps a competition's receipts (``podium verify --receipts``)."""
    return config_path().parent / "receipts" / slug


def keep_receipt(directory: Path, receipt: dict[str, Any]) -> Path:
    """Write a receipt as ``<competition>-<position>.json`` under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / f"{receipt.get('competition')}-{receipt.get('seq')}.json"
    path.write_text(json.dumps(receipt, indent=2, sort_keys=True) + "\n")
    return path


def save_login(login: Login) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump({"url": login.url, "token": login.token}, out)
    os.chmod(tmp, 0o600)  # whatever the umask or an older file said
    os.replace(tmp, path)
    return path


def current_login() -> Login:
    stored: dict[str, str] = {}
    path = config_path()
    if path.is_file():
        try:
            stored = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise ClientError(f"cannot read {path}: {exc}") from None
    url = os.environ.get("PODIUM_URL") or stored.get("url")
    token = os.environ.get("PODIUM_TOKEN") or stored.get("token")
    if not url or not token:
        raise ClientError(
            "not logged in: run `podium login URL`, or set PODIUM_URL and PODIUM_TOKEN"
        )
    return Login(url=url.rstrip("/"), token=token)
