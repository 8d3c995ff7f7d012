"""What the stats tests share: a label key whose first half is public, the rest private."""

from tests.helpers import csv_bytes


def alternating_key(n: int) -> tuple[list[str], list[str], bytes]:
    """Ids r00.., labels alternating y/x, and the key CSV with the first n // 2 rows Public."""
    ids = [f"r{i:02d}" for i in range(n)]
    truth = ["x" if i % 2 else "y" for i in range(n)]
    key = csv_bytes(
        ["id", "label", "Usage"],
        *[
            [i, t, "Public" if k < n // 2 else "Private"]
            for k, (i, t) in enumerate(zip(ids, truth, strict=True))
        ],
    )
    return ids, truth, key
