"""Pages from a bundle, made safe to show: HTML through nh3's allow-list, Markdown kept as text
(it is rendered and sanitised where it is shown, like every description)."""

import nh3

from app.bundles.errors import BundleError
from app.bundles.model import Page, PageFormat, PageKind

MAX_PAGE_BYTES = 2 << 20


def sanitise_html(html: str) -> str:
    return nh3.clean(html, link_rel="noopener noreferrer nofollow")


def page_from_bytes(
    data: bytes, *, title: str, path: str, kind: PageKind = "page", fmt: PageFormat | None = None
) -> Page:
    if len(data) > MAX_PAGE_BYTES:
        raise BundleError(f"is larger than {MAX_PAGE_BYTES} bytes", file=path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Old CodaLab pages were often written in Windows-1252; no byte fails in latin-1.
        text = data.decode("latin-1")
    if fmt is None:
        fmt = "markdown" if path.lower().endswith((".md", ".markdown")) else "html"
    content = sanitise_html(text) if fmt == "html" else text
    return Page(title=title, content=content, format=fmt, kind=kind)
