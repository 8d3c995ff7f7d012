"""Allow and deny lists: addresses and ``@domain``s, normalised as app.auth.emails does, so that
a list holds one spelling per entry and matching is a set lookup."""

from typing import Annotated

from pydantic import AfterValidator, Field

from app.auth.emails import InvalidEmail, domain_of, normalise_email

MAX_ENTRIES = 1000
MAX_ENTRY = 254


def _entry(value: str) -> str:
    value = value.strip()
    if value.startswith("@"):
        domain = value[1:].lower().rstrip(".")
        try:
            normalise_email(f"x@{domain}", field="domain")
        except InvalidEmail:
            raise ValueError(f"'{value[:80]}' is not an address or an @domain") from None
        return "@" + domain
    try:
        return normalise_email(value, field="address")
    except InvalidEmail:
        raise ValueError(f"'{value[:80]}' is not an address or an @domain") from None


def _entries(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return sorted({_entry(v) for v in values})


AccessEntry = Annotated[str, Field(min_length=1, max_length=MAX_ENTRY)]
# ``["ada@example.org", "@example.edu"]``; a domain covers its subdomains.
AccessList = Annotated[
    list[AccessEntry] | None,
    Field(default=None, max_length=MAX_ENTRIES),
    AfterValidator(_entries),
]


def on_list(address: str | None, entries: list[str] | None) -> bool:
    """Whether the address is on the list, itself or by its domain (or a parent domain)."""
    if not address or not entries:
        return False
    if address in entries:
        return True
    domain = domain_of(address)
    parts = domain.split(".")
    return any("@" + ".".join(parts[i:]) in entries for i in range(len(parts)))
