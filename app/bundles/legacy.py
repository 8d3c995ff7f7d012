"""Library calls that old scoring programs make and today's libraries removed, rewritten at
import so that a program runs on the scorer runtime as it did in its platform's image
(codalab-legacy's numpy, PyYAML and pip): numpy's aliases of builtins (``np.float``, removed in
numpy 1.24), ``yaml.load`` without a Loader (an error since PyYAML 6) and pip's
``get_installed_distributions`` (gone since pip 10). Each rewrite is named in the
import's warnings with its files. Pure: files in, files out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial

from app.bundles.py2 import BINARY_WORK

# np.float, numpy.int, ... but not np.float64 or np.int_ (the lookahead keeps names whole).
_NUMPY_ALIAS = re.compile(r"\b(?:np|numpy)\.(float|int|bool|object|str|complex|long)\b(?![\w(])")
_NUMPY_BUILTIN = {"long": "int"}
_YAML_LOAD = re.compile(r"\byaml\.load\(")
# ChaLearn's libscores.py (in many AutoML-era CodaLab bundles) lists the installed packages with
# pip's get_installed_distributions, gone since pip 10: an empty list, as nothing is listed.
_PIP_IMPORT = re.compile(
    r"^(\s*)from\s+pip\s+import\s+get_installed_distributions(?:\s+as\s+(\w+))?\s*$", re.M
)
_PIP_CALL = re.compile(r"\bpip\.get_installed_distributions\(")
# A file opened 'wb' (or 'ab') and written a string literal: Python 2's str was bytes, Python 3
# refuses it (CodaLab's test_competition scorer writes "set1_score: %0.6f" so). Only such files
# change to text mode; a file written bytes keeps its mode.
_BINARY_OPEN = re.compile(
    r"""(?:(?P<var>\w+)\s*=\s*open\((?P<args>(?:[^()\n]|\([^()\n]*\))*?),\s*(?P<q>['"])(?P<m>[wa])b(?P=q)\s*\)"""
    r"""|with\s+open\((?P<args2>(?:[^()\n]|\([^()\n]*\))*?),\s*(?P<q2>['"])(?P<m2>[wa])b(?P=q2)\s*\)\s+as\s+(?P<var2>\w+))"""
)


@dataclass
class Rewrites:
    files: dict[str, bytes]
    numpy: list[str] = field(default_factory=list)
    yaml: list[str] = field(default_factory=list)
    pip: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def sentences(self, where: str) -> list[str]:
        out = []
        if self.numpy:
            out.append(
                f"{where}: numpy's aliases of builtins (np.float, np.int, ...), removed in numpy "
                f"1.24, are written as the builtins in {', '.join(self.numpy)}"
            )
        if self.yaml:
            out.append(
                f"{where}: yaml.load() without a Loader, an error since PyYAML 6, is written "
                f"yaml.full_load() in {', '.join(self.yaml)}"
            )
        if self.text:
            out.append(
                f"{where}: files opened 'wb' and written text (Python 2's str) are opened in "
                f"text mode in {', '.join(self.text)}"
            )
        if self.pip:
            out.append(
                f"{where}: pip's get_installed_distributions(), gone since pip 10, answers an "
                f"empty list in {', '.join(self.pip)}"
            )
        return out


def rewrite_legacy_calls(files: Mapping[str, bytes]) -> Rewrites:
    out = Rewrites(files=dict(files))
    for path, data in sorted(files.items()):
        if not path.endswith(".py"):
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        changed = _NUMPY_ALIAS.sub(lambda m: _NUMPY_BUILTIN.get(m[1], m[1]), text)
        if changed != text:
            out.numpy.append(path)
        lines = []
        for line in changed.splitlines(keepends=True):
            if _YAML_LOAD.search(line) and "Loader" not in line:
                fixed = _one_argument_loads(line)
                if fixed != line and path not in out.yaml:
                    out.yaml.append(path)
                line = fixed
            lines.append(line)
        changed = "".join(lines)
        unpipped = _PIP_IMPORT.sub(
            lambda m: (
                f"{m[1]}def {m[2] or 'get_installed_distributions'}(*_a, **_k):  "
                "# pip < 10 only (Podium rewrote it at import)\n"
                f"{m[1]}    return []"
            ),
            changed,
        )
        unpipped = _PIP_CALL.sub("(lambda *_a, **_k: [])(", unpipped)
        if unpipped != changed:
            out.pip.append(path)
            changed = unpipped
        # A program that works in bytes (pickle, numpy's files, ...) keeps every mode: its
        # names are too often shared between a binary and a text file to tell them apart.
        binary = BINARY_WORK.search(changed)
        texted = (
            changed if binary else _BINARY_OPEN.sub(partial(_text_mode, source=changed), changed)
        )
        if texted != changed:
            out.text.append(path)
            changed = texted
        if changed != text:
            out.files[path] = changed.encode("utf-8")
    return out


def _text_mode(match: re.Match[str], *, source: str) -> str:
    var = match["var"] or match["var2"]
    writes_text = re.search(rf"\b{re.escape(var)}\.write\(\s*[rRuU]?['\"]", source)
    if not writes_text:
        return match[0]
    mode = match["m"] or match["m2"]
    quote = match["q"] or match["q2"]
    return match[0].replace(f"{quote}{mode}b{quote}", f"{quote}{mode}{quote}", 1)


def _one_argument_loads(line: str) -> str:
    """Each ``yaml.load(x)`` of the line given one argument, closed on the line, as
    ``yaml.full_load(x)``; a call with a second argument (a Loader) or spanning lines stays."""
    out, at = [], 0
    for match in _YAML_LOAD.finditer(line):
        depth, commas, end = 1, 0, None
        for i in range(match.end(), len(line)):
            char = line[i]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth == 0:
                    end = i
                    break
            elif char == "," and depth == 1:
                commas += 1
        if end is None or commas:
            continue
        out.append(line[at : match.start()] + "yaml.full_load(")
        at = match.end()
    return "".join(out) + line[at:]
