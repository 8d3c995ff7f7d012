"""YAML from a bundle, loaded as data and nothing else.

PyYAML's SafeLoader already refuses Python objects; on top of it: no explicit tags at all (``!!binary``,
``!!set``, application tags: a bundle's config is plain mappings, lists and scalars), a bounded
number of aliases (an anchor used a billion times costs nothing to parse but everything to walk),
a bounded size, and bounded nesting. Anchors and aliases themselves stay: CodaLab bundles use them
for every column's ``leaderboard: *RESULTS``.
"""

from typing import Any

import yaml
from yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent

from app.bundles.errors import BundleError

MAX_YAML_BYTES = 1 << 20
MAX_ALIASES = 500
MAX_DEPTH = 64
# What the document would hold with every alias copied out: nine aliases to a list of nine
# aliases... are few aliases but a billion values for whoever walks the result.
MAX_EXPANDED_NODES = 1_000_000


class _Loader(yaml.SafeLoader):  # type: ignore[misc]
    max_aliases = MAX_ALIASES

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.aliases = 0
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            self.aliases += 1
            if self.aliases > self.max_aliases:
                raise _Refused(f"more than {self.max_aliases} aliases", event.start_mark)
        elif isinstance(event, ScalarEvent | CollectionStartEvent):
            if event.tag not in (None, "!"):
                raise _Refused(f"explicit tag {event.tag!r} is not allowed", event.start_mark)
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _Refused(Exception):
    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.line = mark.line + 1 if mark is not None else None


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    known = memo.get(id(node))
    if known is not None:
        return known
    memo[id(node)] = 1  # a node reached again while it is being counted (a cycle) counts once
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    memo[id(node)] = size
    return size


def load_yaml(data: bytes, *, file: str, max_bytes: int = MAX_YAML_BYTES) -> Any:
    """The document in ``data`` as plain Python values, or a BundleError naming ``file``."""
    if len(data) > max_bytes:
        raise BundleError(f"is larger than {max_bytes} bytes", file=file)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BundleError(f"is not UTF-8 text (byte {exc.start})", file=file) from None
    try:
        # PyYAML's reader refuses a control character as the loader is made, before parsing.
        loader = _Loader(text)
    except yaml.YAMLError as exc:
        raise BundleError(f"is not valid YAML: {_reader_problem(exc)}", file=file) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        expanded = _expanded_size(node, {})
        if expanded > MAX_EXPANDED_NODES:
            raise _Refused(
                f"expands to {expanded} values through its aliases (at most {MAX_EXPANDED_NODES})",
                None,
            )
        return loader.construct_document(node)
    except _Refused as exc:
        line = f" (line {exc.line})" if exc.line is not None else ""
        raise BundleError(f"{exc}{line}", file=file) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise BundleError(f"is not valid YAML: {problem}{line}", file=file) from None
    finally:
        loader.dispose()


def _reader_problem(exc: yaml.YAMLError) -> str:
    """A reader error as one line: the character and where (PyYAML's own text spans lines)."""
    if isinstance(exc, yaml.reader.ReaderError):
        char = exc.character
        what = f"character #x{char:04x}" if isinstance(char, int) else f"byte {char!r}"
        return f"{what} is not allowed in YAML (position {exc.position})"
    return " ".join(str(exc).split())
