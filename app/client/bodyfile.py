"""Reading a competition body from a file a host wrote (YAML or JSON), safely and with line
numbers: YAML's safe loader (no tags that build objects), at most ``MAX_BYTES``, a bounded number
of aliases and a bounded size once aliases are expanded (a "billion laughs" file is refused
before it is expanded), and each value's line kept so an error can point at it."""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

MAX_BYTES = 1 << 20
MAX_ALIASES = 32
MAX_NODES = 100_000  # values once aliases are expanded; a real body has a few dozen


class BodyFileError(ValueError):
    pass


@dataclass
class Body:
    data: dict[str, Any]
    # The line (1-based) of each value, by its path of keys and indexes; empty for JSON.
    lines: dict[tuple[str | int, ...], int] = field(default_factory=dict)

    def line_of(self, loc: tuple[str | int, ...]) -> int | None:
        """The line of the deepest part of ``loc`` the file holds (a missing key: its parent)."""
        for end in range(len(loc), -1, -1):
            if loc[:end] in self.lines:
                return self.lines[loc[:end]]
        return None


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, counting aliases as they are composed."""

    aliases = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise BodyFileError(
                    f"line {mark.line + 1}: more than {MAX_ALIASES} aliases (*name); "
                    "write the values out"
                )
        return super().compose_node(parent, index)  # type: ignore[no-any-return]


# Dates stay text: the API reads them by its own rule (a bare date's start or end of day), and a
# bad one is refused by the schema with its field and line, not by YAML's date constructor.
_BoundedLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _expanded_size(node: Node, budget: list[int]) -> None:
    """Count the values the node stands for with aliases expanded; stop past the budget."""
    budget[0] -= 1
    if budget[0] < 0:
        raise BodyFileError(f"the file expands to more than {MAX_NODES:,} values (aliases?)")
    if isinstance(node, MappingNode):
        for key, value in node.value:
            _expanded_size(key, budget)
            _expanded_size(value, budget)
    elif isinstance(node, SequenceNode):
        for item in node.value:
            _expanded_size(item, budget)


def _lines(node: Node, path: tuple[str | int, ...], out: dict[tuple[str | int, ...], int]) -> None:
    out[path] = node.start_mark.line + 1
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key.value, str):
                out[(*path, key.value)] = key.start_mark.line + 1
                _lines(value, (*path, key.value), out)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            _lines(item, (*path, i), out)


def read_text(path: Path) -> str:
    try:
        with path.open("rb") as source:
            raw = source.read(MAX_BYTES + 1)
    except OSError as exc:
        raise BodyFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise BodyFileError(f"{path} is larger than {MAX_BYTES // 1024} KiB")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BodyFileError(f"{path} is not UTF-8 text") from None


def parse(text: str, *, is_json: bool) -> Body:
    if is_json:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BodyFileError(f"line {exc.lineno}: {exc.msg}") from None
        lines: dict[tuple[str | int, ...], int] = {}
    else:
        try:
            # PyYAML's reader refuses a control character as the loader is made.
            loader = _BoundedLoader(text)
        except yaml.YAMLError as exc:
            raise BodyFileError(" ".join(str(exc).split())) from None
        try:
            node = loader.get_single_node()
            if node is None:
                raise BodyFileError("the file is empty")
            _expanded_size(node, [MAX_NODES])
            data = loader.construct_document(node)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f"line {mark.line + 1}: " if mark is not None else ""
            raise BodyFileError(f"{where}{exc.problem or exc.context}") from None
        except (yaml.YAMLError, ValueError) as exc:
            raise BodyFileError(str(exc).splitlines()[0]) from None
        finally:
            loader.dispose()
        lines = {}
        _lines(node, (), lines)
    if not isinstance(data, dict):
        raise BodyFileError("the file must hold a mapping of fields (slug: ..., title: ...)")
    return Body(data=data, lines=lines)


def read_body(path: Path) -> Body:
    return parse(read_text(path), is_json=path.suffix.lower() == ".json")
