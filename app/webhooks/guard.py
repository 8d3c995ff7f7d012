"""Where a delivery may go (SSRF): http(s) URLs without credentials, to public addresses only
unless the operator allows private ones (``PODIUM_WEBHOOK_ALLOW_PRIVATE=true``). The name is
resolved once per attempt and the address checked is the address connected to, so a name that
answers a public address to the check and a private one to the connection (DNS rebinding) gets
nowhere."""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from app.errors import Unprocessable

MAX_URL = 2000


class UnsafeUrl(Unprocessable):
    code = "webhook_url_refused"


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as the URL names it (the Host header, TLS's server name)
    port: int
    path: str  # with its query
    address: str  # the IP connected to


def parse(url: str) -> tuple[str, str, int, str]:
    if len(url) > MAX_URL:
        raise UnsafeUrl(f"url: at most {MAX_URL} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UnsafeUrl("url: not a valid URL") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeUrl("url: must start with https:// (or http://)")
    if not parts.hostname:
        raise UnsafeUrl("url: names no host")
    if parts.username or parts.password:
        raise UnsafeUrl("url: must not carry a user name or password")
    if parts.fragment:
        raise UnsafeUrl("url: must not have a #fragment")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), path


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


def check_url(url: str, *, allow_private: bool) -> None:
    """At registration: a well-formed URL; an address literal must be public (no lookup here:
    names are checked at each delivery, where their answer is the one connected to)."""
    _scheme, host, _port, _path = parse(url)
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if host.lower() in ("localhost", "localhost.localdomain") or host.lower().endswith(
            ".localhost"
        ):
            if not allow_private:
                raise UnsafeUrl(
                    "url: a loopback address is not allowed (PODIUM_WEBHOOK_ALLOW_PRIVATE)"
                ) from None
        return
    if not allow_private and not is_public(host):
        raise UnsafeUrl(
            f"url: {host} is a loopback, private or link-local address; deliveries go to "
            "public addresses only (the operator may allow others: PODIUM_WEBHOOK_ALLOW_PRIVATE)"
        )


class Refused(Exception):
    """A delivery's destination turned out not to be allowed (or not to resolve)."""


def resolve(url: str, *, allow_private: bool) -> Target:
    scheme, host, port, path = parse(url)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise Refused(f"{host} does not resolve: {exc}") from None
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise Refused(f"{host} does not resolve")
    if not allow_private:
        # Every answer must be public: a name with one private answer is refused outright.
        private = [a for a in addresses if not is_public(a)]
        if private:
            raise Refused(
                f"{host} resolves to {private[0]}, a loopback, private or link-local address"
            )
    return Target(scheme, host, port, path, addresses[0])
