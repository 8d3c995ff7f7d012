"""Competition descriptions: Markdown rendered by markdown-it-py, then sanitised by nh3.

Raw HTML in the source is escaped by the renderer and whatever survives is cleaned again by an
allow-list, so a host's (or an intruder's) description can never run script on the page.
"""

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

_md = (
    MarkdownIt("commonmark", {"html": False, "linkify": False})
    .enable("table")
    .enable("strikethrough")
)

_TAGS = {
    "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "img", "li", "ol", "p", "pre", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "th": {"align"},
    "td": {"align"},
}


def render_markdown(source: str) -> Markup:
    html = _md.render(source or "")
    clean = nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="nofollow noopener noreferrer",
    )
    return Markup(clean)  # noqa: S704 - sanitised just above
