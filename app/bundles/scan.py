"""What can be known of a scoring program without running it.

Run nothing: read each ``.py`` with ``ast``. Name every module it imports that the scorer runtime
lacks (one warning per module, with the first file and line that imports it), say whether it is
Python 2 (a print statement, ``except E, e``, a Python 2 module...) with the file and line, and
name what cannot work in the jail (installing packages at run time).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

# What the jail's Python offers scoring programs besides the standard library: the packages that
# scoring programs commonly import, by import name.
RUNTIME_MODULES = frozenset({"numpy", "scipy", "sklearn", "pandas", "yaml", "psutil"})
MAX_SOURCE_BYTES = 2 << 20

_PY2_MODULES = frozenset(
    {
        "urllib2",
        "cPickle",
        "cStringIO",
        "StringIO",
        "ConfigParser",
        "Queue",
        "commands",
        "HTMLParser",
        "httplib",
        "urlparse",
        "__builtin__",
        "Tkinter",
        "md5",
        "sets",
    }
)
_PY2_BUILTINS = frozenset(
    {"xrange", "raw_input", "unicode", "basestring", "unichr", "execfile", "long"}
)
_PY2_LINES = (
    (re.compile(r"^\s*print\s+(?![\s(=.\[])\S"), "a print statement"),
    (re.compile(r"^\s*print\s*$"), "a print statement"),
    (re.compile(r"^\s*exec\s+['\"]"), "an exec statement"),
    (re.compile(r"^\s*except\s+[\w.]+\s*,\s*\w+\s*:"), "`except E, name:`"),
    (re.compile(r"^\s*raise\s+[\w.]+\s*,"), "`raise E, message`"),
    (re.compile(r"<>"), "the `<>` operator"),
    (re.compile(r"(?<![\w.])0\d+(?![\w.])"), "an old-style octal number"),
    (re.compile(r"`[^`\n]+`"), "backquotes"),
    (re.compile(r"\bur['\"]"), "a ur'' string"),
)
_PIP = re.compile(r"\bpip3?\b[^\n]*\binstall\b|\bpip\.main\(")


@dataclass
class ProgramReport:
    warnings: list[str] = field(default_factory=list)
    python2: list[str] = field(default_factory=list)  # "file line N: what"
    missing_modules: list[str] = field(default_factory=list)

    @property
    def is_python2(self) -> bool:
        return bool(self.python2)


def _local_modules(files: Mapping[str, bytes]) -> set[str]:
    names: set[str] = set()
    for path in files:
        parts = path.split("/")
        names.update(p for p in parts[:-1])
        if parts[-1].endswith(".py"):
            names.add(parts[-1][:-3])
        elif parts[-1].endswith((".so", ".pyd")):
            names.add(parts[-1].split(".", 1)[0])
    return names


def _python2_line(source: str) -> tuple[int, str] | None:
    in_string = False
    for number, line in enumerate(source.splitlines(), start=1):
        # A crude guard against matching inside docstrings: skip lines within triple quotes.
        if line.count('"""') % 2 or line.count("'''") % 2:
            in_string = not in_string
            continue
        if in_string or line.lstrip().startswith("#"):
            continue
        code = line.split("#", 1)[0]
        for pattern, what in _PY2_LINES:
            if pattern.search(code):
                return number, what
    return None


def scan_program(
    files: Mapping[str, bytes], *, label: str, runtime: frozenset[str] = RUNTIME_MODULES
) -> ProgramReport:
    """``label`` names the program in the warnings (e.g. "the evaluation script")."""
    report = ProgramReport()
    local = _local_modules(files)
    known = set(sys.stdlib_module_names) | runtime | local
    missing: dict[str, str] = {}
    for path in sorted(files):
        if not path.endswith(".py"):
            continue
        data = files[path]
        if len(data) > MAX_SOURCE_BYTES:
            report.warnings.append(f"{label}: {path} is too large to check ({len(data)} bytes)")
            continue
        source = data.decode("utf-8", errors="replace")
        for match in _PIP.finditer(source):
            line = source.count("\n", 0, match.start()) + 1
            report.warnings.append(
                f"{label}: {path} line {line} installs packages when it runs; the scorer runtime "
                "has no network, so only what it already holds can be imported"
            )
            break
        try:
            tree = ast.parse(source, filename=path)
        except SyntaxError as exc:
            found = _python2_line(source)
            if found is not None:
                report.python2.append(f"{path} line {found[0]}: {found[1]}")
            else:
                report.warnings.append(
                    f"{label}: {path} line {exc.lineno} is not valid Python 3 ({exc.msg})"
                )
            continue
        bound = {
            n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } | {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            elif (
                isinstance(node, ast.Name)
                and node.id in _PY2_BUILTINS
                and isinstance(node.ctx, ast.Load)
                and node.id not in bound
            ):
                report.python2.append(
                    f"{path} line {node.lineno}: the Python 2 built-in {node.id}()"
                )
            for module in modules:
                top = module.split(".", 1)[0]
                if top in _PY2_MODULES:
                    report.python2.append(
                        f"{path} line {getattr(node, 'lineno', 0)}: the Python 2 module {top}"
                    )
                elif top not in known and top not in missing:
                    missing[top] = f"{path} line {getattr(node, 'lineno', 0)}"
    for module, where in missing.items():
        report.missing_modules.append(module)
        report.warnings.append(
            f"{label} imports {module} ({where}), which the scorer runtime does not have"
        )
    if report.python2:
        report.warnings.append(
            f"{label} is Python 2 ({report.python2[0]}"
            + (f", and {len(report.python2) - 1} more" if len(report.python2) > 1 else "")
            + "); Podium runs Python 3 only, so it must be converted before it can score"
        )
    requirements = files.get("requirements.txt")
    if requirements is not None:
        for raw in requirements.decode("utf-8", errors="replace").splitlines():
            name = re.split(r"[\s<>=!~\[;#]", raw.strip(), maxsplit=1)[0]
            if name and name.lower().replace("-", "_") not in {m.lower() for m in known} | {
                "scikit_learn",
                "pyyaml",
            }:
                report.warnings.append(
                    f"{label}: requirements.txt asks for {name}, which Podium does not install"
                )
    return report
