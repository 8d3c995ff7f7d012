"""Small builders for API tests: CSV bytes, competitions, keys and submissions."""

from collections.abc import Callable
from typing import Any

from sqlalchemy import event

from tests.asgi_client import TestClient

API = "/api/v1"


def csv_bytes(header: list[str], *rows: list[Any]) -> bytes:
    lines = [",".join(header)] + [",".join(str(v) for v in row) for row in rows]
    return ("\n".join(lines) + "\n").encode()


# A binary key: ids a..f, Usage split 3 public / 3 private.
KEY_ROWS = [
    ["a", 1, "Public"],
    ["b", 0, "Public"],
    ["c", 1, "Public"],
    ["d", 0, "Private"],
    ["e", 1, "Private"],
    ["f", 0, "Private"],
]
KEY = csv_bytes(["id", "target", "Usage"], *KEY_ROWS)


def predictions(**scores: float) -> bytes:
    return csv_bytes(["id", "target"], *[[k, v] for k, v in scores.items()])


PERFECT = predictions(a=0.9, b=0.1, c=0.8, d=0.2, e=0.7, f=0.3)
# Public AUC 0.5, private AUC 1.0.
PUBLIC_HALF = predictions(a=0.5, b=0.5, c=0.5, d=0.2, e=0.7, f=0.3)
# Public AUC 1.0, private AUC 0.0.
PRIVATE_WRONG = predictions(a=0.9, b=0.1, c=0.8, d=0.9, e=0.1, f=0.8)


def create_competition(
    client: TestClient, headers: dict[str, str], slug: str = "churn", **fields: Any
) -> dict[str, Any]:
    body = {"slug": slug, "title": slug.title(), "metric": {"name": "roc_auc"}, **fields}
    response = client.post(f"{API}/competitions", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def upload_key(
    client: TestClient, headers: dict[str, str], slug: str = "churn", content: bytes = KEY
):  # type: ignore[no-untyped-def]
    return client.put(
        f"{API}/competitions/{slug}/answer-key",
        files={"file": ("key.csv", content, "text/csv")},
        headers=headers,
    )


def submit(
    client: TestClient,
    headers: dict[str, str],
    content: bytes,
    slug: str = "churn",
    description: str = "",
    *,
    baseline: bool = False,
):  # type: ignore[no-untyped-def]
    """Upload ``content`` as a submission (with ``baseline``, a host's unranked reference)."""
    data = {"description": description, **({"baseline": "true"} if baseline else {})}
    return client.post(
        f"{API}/competitions/{slug}/submissions",
        files={"file": ("sub.csv", content, "text/csv")},
        data=data,
        headers=headers,
    )


def ready_competition(
    client: TestClient, headers: dict[str, str], slug: str = "churn", **fields: Any
) -> None:
    create_competition(client, headers, slug, **fields)
    response = upload_key(client, headers, slug)
    assert response.status_code == 201, response.text


class ParkedQueue:
    """A scoring queue that accepts jobs and never runs them: a server that died before scoring."""

    def __init__(self) -> None:
        self.ids: list[int] = []

    def enqueue(self, submission_id: int, key_id: int | None = None, *, code: bool = False) -> None:
        self.ids.append(submission_id)

    def start(self) -> None: ...

    def stop(self) -> None: ...


# A competition's window and quotas are its phases' (a legacy competition's one phase "main"):
# a test that moves them by hand moves the phase's too.
_PHASE_FIELDS = {
    "start": "start",
    "deadline": "end",
    "daily_submission_limit": "daily_submission_limit",
    "total_submission_limit": "total_submission_limit",
    "final_selection_limit": "final_selection_limit",
}


def set_competition(session_factory: Any, slug: str | None = None, **fields: Any) -> None:
    """Change competition fields directly (every competition's, or ``slug``'s), whatever the
    API accepts; window and quota fields go to its phases as well."""
    from sqlalchemy import select, update

    from app.models import Competition, Phase

    with session_factory() as session:
        chosen = update(Competition)
        if slug is not None:
            chosen = chosen.where(Competition.slug == slug)
        session.execute(chosen.values(**fields))
        phase_fields = {_PHASE_FIELDS[k]: v for k, v in fields.items() if k in _PHASE_FIELDS}
        if phase_fields:
            phases = update(Phase)
            if slug is not None:
                ids = select(Competition.id).where(Competition.slug == slug)
                phases = phases.where(Phase.competition_id.in_(ids))
            session.execute(phases.values(**phase_fields))
        session.commit()


def close_now(session_factory: Any) -> None:
    """Move every competition's deadline to this instant: all submitted so far was on time."""
    from datetime import UTC, datetime

    set_competition(session_factory, deadline=datetime.now(UTC))


def statements_during(connection: Any, call: Callable[[], object]) -> list[str]:
    """The SQL statements ``call`` sends on the test's ``connection``, whitespace folded. The
    test's savepoints stand for the code's own transactions and are not counted."""
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
        if not statement.lstrip().upper().startswith(("SAVEPOINT", "RELEASE", "ROLLBACK TO")):
            statements.append(" ".join(statement.split()))

    event.listen(connection, "before_cursor_execute", count)
    try:
        call()
    finally:
        event.remove(connection, "before_cursor_execute", count)
    return statements
