"""Header values built from request or user data, encoded so that no byte of that data can end
the value or start another parameter (a file name ``a"; filename*=utf-8''evil.exe`` stays one
file name)."""

import unicodedata
from urllib.parse import quote

# Kept in the ASCII fallback: what every client reads literally inside a quoted string.
_PLAIN = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 !#$%&'()+,-.;=@[]^_`{}~"
)


def _ascii_fallback(filename: str) -> str:
    # Accents dropped where they decompose (é -> e); anything else that could end the quoted
    # string or the header (quotes, backslashes, controls, separators) becomes "_".
    folded = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode()
    return "".join(c if c in _PLAIN else "_" for c in folded).strip() or "download"


def content_disposition(filename: str, disposition: str = "attachment") -> str:
    """``attachment; filename="<ASCII-safe>"; filename*=UTF-8''<percent-encoded>`` (RFC 6266
    with RFC 5987's extended parameter): old clients read the fallback, current ones the exact
    name; neither can be made to read a parameter the name smuggles in."""
    exact = quote(filename, safe="")
    return f"{disposition}; filename=\"{_ascii_fallback(filename)}\"; filename*=UTF-8''{exact}"
