"""The one error a bundle can raise: a 422 naming the file and the field at fault.

Readers collect nothing half-built: the first problem found stops the import, and the message says
where it is (``challenge_config.yaml``, ``leaderboard[0].schema.default_order_by``) so the host can
fix the bundle without guessing.
"""

from app.errors import Unprocessable


class BundleError(Unprocessable):
    code = "invalid_bundle"

    def __init__(self, message: str, *, file: str | None = None, field: str | None = None) -> None:
        where = ", ".join(part for part in (file, field) if part)
        super().__init__(
            f"{where}: {message}" if where else message,
            extra={"file": file, "field": field},
        )
        self.file = file
        self.field = field
        self.message = message
