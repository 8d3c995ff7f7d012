"""Paginated lists: ``limit`` and ``offset`` in, one page of items and the total out.

A list endpoint keeps answering a JSON array (one page of it) and tells the total in the
``X-Total-Count`` header, with a ``Link`` header naming the next and previous pages. A page costs a
fixed number of queries: one to count, one for the page, and one per relationship the page needs
loaded together (never one per item).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Depends, Query, Request, Response
from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.interfaces import ORMOption

from app.models.types import Count

DEFAULT_LIMIT = 50
MAX_LIMIT = 500

T = TypeVar("T")


@dataclass(frozen=True)
class Page:
    limit: int = DEFAULT_LIMIT
    offset: int = 0


@dataclass
class Paged(Generic[T]):
    items: list[T]
    total: int
    page: Page = field(default_factory=Page)


def paginate(
    session: Session, query: Select[Any], page: Page, *, options: Sequence[ORMOption] = ()
) -> Paged[Any]:
    """One page of an ordered ``select`` of ORM rows, and how many rows there are in all."""
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0
    rows = session.scalars(query.options(*options).limit(page.limit).offset(page.offset))
    return Paged(items=list(rows), total=total, page=page)


@dataclass(frozen=True)
class PageRequest(Page):
    """A page asked for by a request; :meth:`tell_total` writes the response's headers."""

    request: Request | None = None
    response: Response | None = None

    def tell_total(self, total: int) -> None:
        if self.response is None or self.request is None:
            return
        self.response.headers["X-Total-Count"] = str(total)
        links = []
        if self.offset + self.limit < total:
            links.append((self.offset + self.limit, "next"))
        if self.offset > 0:
            links.append((max(self.offset - self.limit, 0), "prev"))
        if links:
            url = self.request.url
            self.response.headers["Link"] = ", ".join(
                f'<{url.include_query_params(limit=self.limit, offset=offset)}>; rel="{rel}"'
                for offset, rel in links
            )


async def page_params(
    request: Request,
    response: Response,
    limit: Annotated[
        int, Query(ge=1, le=MAX_LIMIT, description=f"items per page (at most {MAX_LIMIT})")
    ] = DEFAULT_LIMIT,
    offset: Annotated[Count, Query(description="items to skip")] = 0,
) -> PageRequest:
    return PageRequest(limit=limit, offset=offset, request=request, response=response)


PageDep = Annotated[PageRequest, Depends(page_params)]

# Declared on list routes, so the OpenAPI schema shows the headers.
PAGE_HEADERS: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "One page of the list",
        "headers": {
            "X-Total-Count": {
                "description": "items in the whole list",
                "schema": {"type": "integer"},
            },
            "Link": {
                "description": 'the next and previous pages (rel="next", rel="prev")',
                "schema": {"type": "string"},
            },
        },
    }
}
