"""CodaLab's Python 2 scoring programs, converted to Python 3 at import so that they score as they
did on CodaLab (Debian has no Python 2, and neither has the jail).

The conversion is fissix's (lib2to3's maintained fork, the 2to3 fixers: print, ``except E, e``,
``iteritems``, ``has_key``, ...), plus what a plain conversion leaves wrong for a scorer:

- indentation mixing tabs and spaces, which Python 2 read with tabs to the next multiple of 8
  and Python 3 refuses (CodaLab's compute-pi example): leading tabs are expanded so;
- ``/`` between integers, which Python 2 floored: each ``/`` becomes a call that floors when both
  sides are integers (``numbers.Integral``: numpy's too) and divides otherwise, unless the file
  has ``from __future__ import division``;
- text written to a file opened ``'wb'`` (and read from ``'rb'``), which Python 2 allowed (its
  str was bytes): such files are opened in text mode, unless the program works with binary data
  (pickle, numpy's files, struct, images), where the mode is kept.

Pure: files in, files out, and a sentence for the import's warnings. A file that still does not
parse is left as it was, and the program stays Python 2 (refused with its file and line).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_FUTURE_DIVISION = re.compile(r"^\s*from\s+__future__\s+import\s+[^\n]*\bdivision\b", re.M)
BINARY_WORK = re.compile(
    r"\b(pickle|cPickle|np\.save|np\.load|numpy\.save|numpy\.load|struct|tobytes|PIL|Image|cv2|"
    r"h5py|joblib|marshal|tostring|bytearray|gzip|zipfile|tarfile)\b"
)
_BINARY_MODE = re.compile(r"""(\bopen\s*\((?:[^()\n]|\([^()\n]*\))*?,\s*)(['"])([rwa])b(\+?)\2""")
DIVISION_HELPER = (
    "def _podium_py2_div(a, b):  # Python 2's `/` (Podium converted this program at import)\n"
    "    import numbers as _numbers\n"
    "    if isinstance(a, _numbers.Integral) and isinstance(b, _numbers.Integral):\n"
    "        return a // b\n"
    "    return a / b\n"
)


@dataclass
class Conversion:
    files: dict[str, bytes]
    converted: list[str] = field(default_factory=list)
    divisions: int = 0
    text_modes: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "file: why"

    def sentence(self, where: str) -> str:
        parts = [
            f"{where}: the program is Python 2 and was converted to Python 3 at import by "
            f"fissix (2to3): {', '.join(self.converted)}"
        ]
        if self.divisions:
            parts.append(
                f"Python 2's integer division kept at {self.divisions} `/` "
                f"sign{'s' if self.divisions != 1 else ''}"
            )
        if self.text_modes:
            parts.append(
                "files opened 'wb'/'rb' for text opened in text mode in "
                + ", ".join(self.text_modes)
            )
        return "; ".join(parts)


def _expand_leading_tabs(source: str) -> str:
    out = []
    for line in source.splitlines(keepends=True):
        lead = len(line) - len(line.lstrip(" \t"))
        out.append(line[:lead].expandtabs(8) + line[lead:] if "\t" in line[:lead] else line)
    return "".join(out)


def _keep_integer_division(tree: object) -> int:
    """Each ``a / b`` of the fissix tree as ``_podium_py2_div(a, b)``, innermost first."""
    from fissix import pytree
    from fissix.pgen2 import token
    from fissix.pygram import python_symbols as syms

    terms = [
        n
        for n in tree.post_order()  # type: ignore[attr-defined]
        if isinstance(n, pytree.Node)
        and n.type == syms.term
        and any(isinstance(c, pytree.Leaf) and c.type == token.SLASH for c in n.children)
    ]
    count = 0
    for node in terms:  # post order: an operand's own divisions are rewritten before it is read
        children = node.children
        prefix = children[0].prefix
        expression = str(children[0]).strip()
        for op, operand in zip(children[1::2], children[2::2], strict=False):
            right = str(operand).strip()
            if op.type == token.SLASH:
                expression = f"_podium_py2_div({expression}, {right})"
                count += 1
            else:
                expression = f"{expression} {op.value} {right}"
        node.replace(pytree.Leaf(token.NAME, expression, prefix=prefix))
    return count


def _insert_helper(source: str) -> str:
    lines = source.splitlines(keepends=True)
    at = 0
    for i, line in enumerate(lines):
        if line.startswith("#") and i == at:
            at = i + 1  # shebang, coding line
        if re.match(r"\s*from\s+__future__\s+import", line):
            at = i + 1
    return "".join(lines[:at]) + DIVISION_HELPER + "".join(lines[at:])


def _text_modes(source: str) -> tuple[str, bool]:
    if BINARY_WORK.search(source):
        return source, False
    changed = _BINARY_MODE.sub(lambda m: f"{m[1]}{m[2]}{m[3]}{m[4]}{m[2]}", source)
    return changed, changed != source


def convert_files(files: Mapping[str, bytes]) -> Conversion:
    """Every ``.py`` file of a Python 2 program converted (the others as they are)."""
    from fissix.pgen2.parse import ParseError
    from fissix.pgen2.tokenize import TokenError
    from fissix.refactor import RefactoringTool, get_fixers_from_package

    tool = RefactoringTool(get_fixers_from_package("fissix.fixes"))
    out = Conversion(files=dict(files))
    for path, data in sorted(files.items()):
        if not path.endswith(".py"):
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")  # Python 2 read bytes; its literals keep them
        source = _expand_leading_tabs(text)
        if not source.endswith("\n"):
            source += "\n"
        try:
            tree = tool.refactor_string(source, path)
        except (ParseError, TokenError, IndentationError, SyntaxError) as exc:
            out.failed.append(f"{path}: {str(exc)[:200]}")
            continue
        divisions = 0 if _FUTURE_DIVISION.search(source) else _keep_integer_division(tree)
        converted = str(tree)
        if divisions:
            converted = _insert_helper(converted)
        converted, text_mode = _text_modes(converted)
        if converted == text:
            continue
        out.files[path] = converted.encode("utf-8")
        out.converted.append(path)
        out.divisions += divisions
        if text_mode:
            out.text_modes.append(path)
    return out
