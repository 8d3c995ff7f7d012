"""The shape of the code, checked by a machine: no import cycles (delayed imports included), and
the pure scoring engine imports nothing from the service around it.

Imports are read from the source with ``ast``, so an import hidden inside a function counts the
same as one at the top of a module: a delayed import is how a cycle hides, not how it is broken.
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app"

# The pure engine: bytes or arrays in, numbers or typed errors out.
ENGINE_PREFIXES = (
    "app.metrics",
    "app.scoring.intake",
    "app.scoring.core",
)
# What the engine must never reach: the database, HTTP, queues and settings objects.
SERVICE_THIRD_PARTY = ("fastapi", "starlette", "sqlalchemy", "celery", "pydantic_settings", "redis")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in APP.rglob("*.py")}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(module: str, level: int, current: str) -> str:
    if level == 0:
        return module
    base = current.split(".")
    if not _is_package(current):
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _imports(name: str) -> Iterator[str]:
    """Every module ``name`` imports, anywhere in its source."""
    tree = ast.parse(MODULES[name].read_text(), filename=str(MODULES[name]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(node.module or "", node.level, name)
            for alias in node.names:
                # `from app.x import y` imports the module app.x.y when there is one.
                sub = f"{target}.{alias.name}"
                yield sub if sub in MODULES else target


def _app_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name in MODULES:
        edges = set()
        for target in _imports(name):
            # Importing app.a.b runs app.a's __init__ too, but that is the package's own
            # business; the edge that matters is to the module named.
            if target in MODULES and target != name:
                edges.add(target)
        graph[name] = edges
    return graph


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively; components of more than one module are cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        result.append(sorted(component))
    return result


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    # A package's __init__ re-exporting its own submodules is a facade, not a cycle: drop the
    # edges from a package to the modules inside it.
    return {
        name: {t for t in edges if not (_is_package(name) and t.startswith(name + "."))}
        for name, edges in graph.items()
    }


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _strongly_connected(graph) == [["a", "b", "c"]]


def test_no_module_of_the_app_is_part_of_an_import_cycle() -> None:
    cycles = _strongly_connected(_without_package_inits(_app_graph()))
    assert cycles == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


ENGINE_MODULES = sorted(n for n in MODULES if n.startswith(ENGINE_PREFIXES))


def test_the_engine_is_not_empty() -> None:
    assert "app.scoring.core" in ENGINE_MODULES and "app.metrics.registry" in ENGINE_MODULES


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_the_engine_imports_nothing_from_the_service(module: str) -> None:
    bad = []
    for target in _imports(module):
        if target.split(".")[0] in SERVICE_THIRD_PARTY:
            bad.append(target)
        elif (
            target.startswith("app.")
            and target in MODULES
            and not target.startswith(ENGINE_PREFIXES)
        ):
            bad.append(target)
        elif target == "app":
            continue
    assert bad == [], f"{module} imports service code: {sorted(set(bad))}"
