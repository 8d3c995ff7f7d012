"""One door for every bundle: detect the format, then hand the files to that format's reader."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Literal

from app.bundles.archive import Limits, Tree, open_bundle
from app.bundles.codabench import is_codabench_v2, read_codabench
from app.bundles.codalab import read_codalab
from app.bundles.errors import BundleError
from app.bundles.evalai import CONFIG_NAMES, find_config, read_evalai
from app.bundles.model import Competition
from app.bundles.safe_yaml import load_yaml

Format = Literal["evalai", "codabench", "codalab"]
MARKERS = ("competition.yaml", *CONFIG_NAMES)


def detect(tree: Tree) -> tuple[Format, Tree, str]:
    """The format, the tree rooted where its config is, and the config's path in that tree."""
    tree = tree.unwrap(MARKERS)
    if "competition.yaml" in tree.files:
        config = load_yaml(tree.files["competition.yaml"], file=f"{tree.origin}/competition.yaml")
        if not isinstance(config, dict):
            raise BundleError("must be a mapping", file=f"{tree.origin}/competition.yaml")
        version = str(config.get("version", "1")).strip()
        if is_codabench_v2(config) or (
            # Early Codabench bundles have no version but are v2 in every other way: tasks, and
            # phases as a list (v1.5 phases are a mapping keyed by number).
            "version" not in config and "tasks" in config and isinstance(config.get("phases"), list)
        ):
            return "codabench", tree, "competition.yaml"
        if version in ("1", "1.0", "1.5", "1.8"):
            return "codalab", tree, "competition.yaml"
        raise BundleError(
            f"version {version!r} is neither 1.5 nor 2",
            file=f"{tree.origin}/competition.yaml",
            field="version",
        )
    config_path = find_config(tree)
    if config_path is not None:
        return "evalai", tree, config_path
    yamls = sorted(p for p in tree.files if p.endswith((".yaml", ".yml")))
    if len(yamls) > 1:
        raise BundleError(
            f"holds {len(yamls)} YAML files and none is competition.yaml or challenge_config.yaml: {yamls[:5]}",
            file=tree.origin,
        )
    raise BundleError(
        "holds neither competition.yaml (Codabench, CodaLab) nor challenge_config.yaml (EvalAI) "
        "at its root or inside one folder",
        file=tree.origin,
    )


def read_tree(tree: Tree) -> Competition:
    fmt, root, config_path = detect(tree)
    if fmt == "evalai":
        return read_evalai(root, config_path)
    config = load_yaml(root.files[config_path], file=f"{root.origin}/{config_path}")
    if fmt == "codabench":
        return read_codabench(root, config)
    return read_codalab(root, config)


def read_bundle(
    source: Path | bytes, *, limits: Limits | None = None, name: str = "bundle.zip"
) -> Competition:
    """The competition a bundle describes (a zip's bytes, a ``.zip`` path or a directory), with
    its warnings; a BundleError (422) naming the file and field of the first problem."""
    try:
        tree = open_bundle(source, limits=limits, name=name)
        model = read_tree(tree)
        return replace(model, warnings=(*tree.budget.notes, *model.warnings))
    except RecursionError:
        raise BundleError("is nested too deeply to read", file=name) from None
