"""The shape of the code, checked by a machine: no import cycles (delayed imports included),
between modules or between the domain packages, and the pure scoring engine imports nothing from
the service around it.

Imports are read from the source with ``ast``, so an import hidden inside a function counts the
same as one at the top of a module: a delayed import is how a cycle hides, not how it is broken.
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app"

# The pure engine: bytes or arrays in, numbers or typed errors out. app.scoring holds nothing
# else (the jobs and queues that run it are app.jobs).
ENGINE_PREFIXES = (
    "app.metrics",
    "app.scoring",
    "app.honest.engine",
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


# The layer on top: the HTTP routes and the entry points. They wire the domains together and may
# import any of them; they are left out of the package graph (a router importing app.deps, which
# imports app.auth, is wiring, not a dependency of its domain on auth), and no domain imports them.
TOP_MODULES = ("app.main", "app.deps")
TOP_PACKAGES = ("app.web", "app.cli")


def _on_top(name: str) -> bool:
    return (
        name.rsplit(".", 1)[-1] == "router"
        or name in TOP_MODULES
        or name.startswith(tuple(p + "." for p in TOP_PACKAGES))
        or name in TOP_PACKAGES
    )


# Folders that group related domains under one name (a newcomer finds every room of honest boards
# in app/honest/); each room inside is a domain of its own, held to the same layering.
DOMAIN_FAMILIES = ("app.honest",)


def _package(name: str) -> str:
    """The domain a module belongs to: app.jobs.score -> app.jobs; app.config is its own;
    app.honest.board.ladder -> app.honest.board (a room of a family)."""
    depth = 3 if name.startswith(tuple(f + "." for f in DOMAIN_FAMILIES)) else 2
    return ".".join(name.split(".")[:depth])


def _package_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """Each package-to-package import below the top layer, with the module imports behind it."""
    edges: dict[tuple[str, str], list[str]] = {}
    for name, targets in graph.items():
        if _on_top(name):
            continue
        for target in targets:
            if _on_top(target) or _package(target) == _package(name):
                continue
            edges.setdefault((_package(name), _package(target)), []).append(f"{name} -> {target}")
    return edges


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {_package(n): set() for n in graph if not _on_top(n)}
    for source, target in _package_edges(graph):
        packages[source].add(target)
        packages.setdefault(target, set())
    return packages


def test_the_package_graph_sees_a_cycle_through_any_module() -> None:
    graph = {
        "app.a.x": {"app.b.y"},
        "app.b.y": set(),
        "app.b.z": {"app.a.w"},  # another module of b: the packages still form a cycle
        "app.a.w": set(),
        "app.a.router": {"app.c.v"},  # routes sit on top and add no edge
        "app.c.v": {"app.a.w"},
    }
    assert _strongly_connected(_package_graph(graph)) == [["app.a", "app.b"]]


def _one_cycle(graph: dict[str, set[str]], members: set[str]) -> list[str]:
    """A shortest cycle through the first of ``members`` (a strongly connected component)."""
    start = min(members)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"{sorted(members)} is not a cycle")


def test_one_cycle_is_a_path_back_to_its_start() -> None:
    graph = {"a": {"b"}, "b": {"c", "a"}, "c": {"a"}}
    assert _one_cycle(graph, {"a", "b", "c"}) == ["a", "b", "a"]


def test_no_domain_package_is_part_of_an_import_cycle() -> None:
    """app.X -> app.Y whenever any module of X imports one of Y, delayed imports included: the
    domains form layers (engine, evaluation, stats, boards, jobs, ...) that import downwards."""
    graph = _app_graph()
    packages, edges = _package_graph(graph), _package_edges(graph)
    report = []
    for component in _strongly_connected(packages):
        cycle = _one_cycle(packages, set(component))
        steps = [f"{a} -> {b} ({edges[a, b][0]})" for a, b in zip(cycle, cycle[1:], strict=False)]
        report.append(", then ".join(steps))
    assert report == [], "package import cycles: " + " | ".join(report)


def test_no_domain_imports_the_routes_or_entry_points() -> None:
    bad = [
        f"{name} -> {target}"
        for name, targets in _app_graph().items()
        if not _on_top(name)
        for target in targets
        if _on_top(target) and _package(target) != _package(name)
    ]
    assert bad == [], f"domain modules importing the top layer: {bad}"


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


def _pydantic_classes(name: str) -> list[str]:
    tree = ast.parse(MODULES[name].read_text(), filename=str(MODULES[name]))
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(
            isinstance(b, ast.Name | ast.Attribute) and ast.unparse(b).endswith("BaseModel")
            for b in node.bases
        )
    ]


def test_request_and_response_schemas_live_in_schemas_modules() -> None:
    found = {
        name: classes
        for name in MODULES
        if name.rsplit(".", 1)[-1] in ("router", "service") and (classes := _pydantic_classes(name))
    }
    assert found == {}, f"pydantic models outside schemas.py: {found}"


def test_the_top_of_app_is_a_map() -> None:
    """At most eight modules directly under app/ (``__init__`` counted): the rest lives in the
    domain folders, so that the listing of app/ reads as the architecture."""
    top = sorted(p.name for p in APP.glob("*.py"))
    assert len(top) <= 8, f"modules directly under app/: {top}"


def test_every_room_of_a_family_is_a_package() -> None:
    for family in DOMAIN_FAMILIES:
        folder = APP.joinpath(*family.split(".")[1:])
        loose = sorted(p.name for p in folder.glob("*.py") if p.name != "__init__.py")
        assert loose == [], f"{family} groups packages only; loose modules: {loose}"
