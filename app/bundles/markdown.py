"""A bundle's HTML pages as Markdown, since a Podium description is Markdown (rendered with raw
HTML escaped, then sanitised): headings, paragraphs, emphasis, links, images, lists, code and
tables keep their shape; any other tag keeps its text. Pure, standard library only.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from app.bundles.model import Competition, Page

_BLOCKS = {"p", "div", "section", "article", "header", "footer", "blockquote", "table"}
_SKIP = {"script", "style", "head", "title", "iframe", "object", "noscript"}


class _Writer(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.lists: list[list[int]] = []  # per open list: [is_ordered, next number]
        self.links: list[str | None] = []
        self.skipping = 0
        self.pre = 0
        self.cells = 0
        self.rows = 0  # rows of the table being written

    def _block(self) -> None:
        if self.out and not "".join(self.out[-2:]).endswith("\n\n"):
            self.out.append("\n\n")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in _SKIP:
            self.skipping += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self._block()
            self.out.append("#" * int(tag[1]) + " ")
        elif tag in _BLOCKS:
            self._block()
            self.rows = 0 if tag == "table" else self.rows
        elif tag == "tr":
            self.cells = 0
        elif tag == "br":
            self.out.append("  \n")
        elif tag in ("strong", "b"):
            self.out.append("**")
        elif tag in ("em", "i"):
            self.out.append("*")
        elif tag == "code" and not self.pre:
            self.out.append("`")
        elif tag == "pre":
            self._block()
            self.out.append("```\n")
            self.pre += 1
        elif tag in ("ul", "ol"):
            self._block()
            self.lists.append([tag == "ol", 1])
        elif tag == "li":
            depth = max(len(self.lists) - 1, 0)
            marker = "- "
            if self.lists and self.lists[-1][0]:
                marker = f"{self.lists[-1][1]}. "
                self.lists[-1][1] += 1
            self.out.append("\n" + "  " * depth + marker)
        elif tag == "a":
            self.links.append(found.get("href"))
            self.out.append("[")
        elif tag == "img":
            self.out.append(f"![{found.get('alt') or ''}]({found.get('src') or ''})")
        elif tag in ("td", "th"):
            self.out.append(" | " if self.cells else "| ")
            self.cells += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skipping = max(self.skipping - 1, 0)
        elif re.fullmatch(r"h[1-6]", tag) or tag in _BLOCKS:
            self._block()
        elif tag == "tr" and self.cells:
            self.out.append(" |\n")
            self.rows += 1
            if self.rows == 1:  # Markdown's header separator after the first row
                self.out.append("|" + " --- |" * self.cells + "\n")
        elif tag in ("strong", "b"):
            self.out.append("**")
        elif tag in ("em", "i"):
            self.out.append("*")
        elif tag == "code" and not self.pre:
            self.out.append("`")
        elif tag == "pre":
            self.pre = max(self.pre - 1, 0)
            self.out.append("\n```")
            self._block()
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            self._block()
        elif tag == "a":
            href = self.links.pop() if self.links else None
            self.out.append(f"]({href})" if href else "]")

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        if not self.pre:
            data = re.sub(r"\s+", " ", data)
            if self.out and self.out[-1].endswith(("\n", "# ", "- ", ". ", "| ")):
                data = data.lstrip()
        self.out.append(data)


def html_to_markdown(html: str) -> str:
    writer = _Writer()
    writer.feed(html)
    writer.close()
    text = "".join(writer.out)
    text = re.sub(r"[ \t]+\n", lambda m: "  \n" if m.group(0).startswith("  ") else "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def as_markdown(page: Page) -> str:
    return html_to_markdown(page.content) if page.format == "html" else page.content


def description_markdown(competition: Competition) -> str:
    """The description with every other page (terms, evaluation, data...) after it as a section
    of its own: Podium has one description, and nothing of a bundle's pages is dropped."""
    parts = [as_markdown(competition.description).strip()]
    for page in competition.pages:
        body = as_markdown(page).strip()
        parts.append(f"## {page.title}\n\n{body}" if body else f"## {page.title}")
    return "\n\n".join(p for p in parts if p) + "\n"
