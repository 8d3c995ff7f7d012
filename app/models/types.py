"""Column types shared by the tables, and the bounded integers every request's numbers are."""

from datetime import UTC, datetime
from typing import Annotated

from annotated_types import Ge, Le
from sqlalchemy import DateTime, TypeDecorator


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite stores naive values)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:  # type: ignore[no-untyped-def]
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given; Podium stores UTC-aware datetimes only")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:  # type: ignore[no-untyped-def]
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


# Every integer a request brings (a path id, an offset, a page, a form's id, a settings field):
# the tables' ids and counts are 32-bit on PostgreSQL, and a bigger number reaching the driver is
# an OverflowError (a 500) where it should be a 422. A request's int is one of these, nothing
# wider.
MAX_INT = 2**31 - 1
RowId = Annotated[int, Ge(1), Le(MAX_INT)]  # an id: positive
Count = Annotated[int, Ge(0), Le(MAX_INT)]  # an offset, a limit, a number of things
