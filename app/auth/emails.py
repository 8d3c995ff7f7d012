"""E-mail addresses, validated and normalised by email-validator (RFC 5322 / 6531 syntax, IDNA
domains): one spelling per address, lower case, so that uniqueness and lists hold."""

from email_validator import EmailNotValidError, validate_email

from app.errors import Unprocessable

MAX_EMAIL_LENGTH = 254


class InvalidEmail(Unprocessable):
    code = "invalid_email"


def normalise_email(address: str, *, field: str = "email") -> str:
    address = address.strip()
    if not address or len(address) > MAX_EMAIL_LENGTH:
        raise InvalidEmail(f"{field}: enter an e-mail address such as ada@example.org")
    try:
        valid = validate_email(address, check_deliverability=False)
    except EmailNotValidError as exc:
        raise InvalidEmail(f"{field}: {exc} (for example ada@example.org)") from None
    return valid.normalized.lower()


def domain_of(address: str) -> str:
    return address.rpartition("@")[2]


def in_domains(address: str, domains: str) -> bool:
    """Whether the address is in one of the comma-separated domains (or their subdomains)."""
    domain = domain_of(address)
    allowed = [d.strip().lower().lstrip("@") for d in domains.split(",") if d.strip()]
    return any(domain == d or domain.endswith("." + d) for d in allowed)
