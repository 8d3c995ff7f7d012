"""``podium backup`` and ``podium restore``: a consistent snapshot of an install (its database,
its stored files, its record's signing key, its settings without secrets, a manifest of
checksums), taken while it serves, and restored into an empty install."""
