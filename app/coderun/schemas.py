from pydantic import BaseModel


class RuntimePublic(BaseModel):
    """The Python that runs participants' code, and each package's version (None: absent)."""

    python: str
    implementation: str
    machine: str
    packages: dict[str, str | None]
    fingerprint: str
