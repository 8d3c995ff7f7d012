"""What a user's name may be: it is shown on boards, pages and exported CSVs, so it is checked
when the user is made. Names already in the database are never re-checked."""

import re
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


# Names people choose for themselves: plain, short, and unlike the site's own words, so that a
# stranger cannot pass for an admin or for a deleted account's pseudonym on a board.
_SIGNUP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{1,31}")
_RESERVED = frozenset({"admin", "administrator", "root", "podium", "support", "staff", "system"})


def check_signup_name(name: str) -> None:
    """The rule for a name chosen at sign-up (stricter than an admin's)."""
    if not _SIGNUP_NAME.fullmatch(name):
        raise Unprocessable(
            "name: 2 to 32 letters, digits, '-', '_' or '.', starting with a letter or digit "
            "(for example ada_l)",
            extra={"rule": "user_name"},
        )
    if name.lower() in _RESERVED or name.lower().startswith("deleted-"):
        raise Unprocessable(
            f"name: '{name}' is reserved; choose another", extra={"rule": "user_name"}
        )
