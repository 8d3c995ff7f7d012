"""What a user's name may be: it is shown on boards, pages and exported CSVs, so it is checked
when the user is made. Names already in the database are never re-checked."""

import unicodedata

from app.errors import Unprocessable

MAX_NAME_LENGTH = 64  # the users.name column

# Control characters, invisible formatting (bidirectional overrides, zero-width characters),
# line and paragraph separators, and unpaired surrogates: none belong in a name someone reads.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def name_problem(name: str, *, max_length: int = MAX_NAME_LENGTH) -> str | None:
    """What is wrong with ``name`` as a user's name, in one sentence, or None."""
    if len(name) < 1:
        return "a user name needs at least 1 character"
    if len(name) > max_length:
        return f"a user name has at most {max_length} characters (this one has {len(name)})"
    if name != name.strip():
        return "a user name may not start or end with whitespace"
    for position, char in enumerate(name, start=1):
        if unicodedata.category(char) in _REFUSED_CATEGORIES:
            return (
                f"a user name may not hold a control character "
                f"(U+{ord(char):04X} at position {position})"
            )
    return None


def check_user_name(name: str) -> None:
    problem = name_problem(name)
    if problem is not None:
        raise Unprocessable(problem, extra={"rule": "user_name"})
