"""How replicates are stored: float32 bytes (4 KB per 1000 replicates)."""

import numpy as np


def to_bytes(values: np.ndarray) -> bytes:
    return np.asarray(values, dtype=np.float32).tobytes()


def from_bytes(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32).astype(np.float64)
