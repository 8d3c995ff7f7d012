"""Safe YAML: plain data, anchors allowed and bounded, tags and oversize refused."""

import pytest

from app.bundles.errors import BundleError
from app.bundles.safe_yaml import load_yaml


def test_anchors_and_aliases_are_read_as_codalab_uses_them() -> None:
    data = load_yaml(
        b"leaderboards:\n  Results: &RESULTS\n    label: Results\ncolumns:\n  a:\n    leaderboard: *RESULTS\n",
        file="competition.yaml",
    )
    assert data["columns"]["a"]["leaderboard"] == {"label": "Results"}


@pytest.mark.parametrize(
    "text",
    [
        "x: !!python/object/apply:os.system ['id']",
        "x: !!binary aGVsbG8=",
        "x: !custom 1",
        "x: !!set {a: null}",
    ],
)
def test_an_explicit_tag_is_refused(text: str) -> None:
    with pytest.raises(BundleError, match="explicit tag") as caught:
        load_yaml(text.encode(), file="competition.yaml")
    assert caught.value.file == "competition.yaml"


def test_a_billion_laughs_is_refused_by_its_expanded_size() -> None:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 9)}]")
    with pytest.raises(BundleError, match="expands to"):
        load_yaml("\n".join(lines).encode(), file="challenge_config.yaml")


def test_more_aliases_than_the_limit_are_refused() -> None:
    text = "a: &a 1\nb: [" + ", ".join(["*a"] * 501) + "]\n"
    with pytest.raises(BundleError, match="more than 500 aliases"):
        load_yaml(text.encode(), file="competition.yaml")


def test_a_document_larger_than_the_limit_is_refused_before_parsing() -> None:
    with pytest.raises(BundleError, match="larger than 100 bytes"):
        load_yaml(b"x: " + b"a" * 200, file="competition.yaml", max_bytes=100)


def test_deep_nesting_is_refused() -> None:
    with pytest.raises(BundleError, match="nested deeper"):
        load_yaml(b"[" * 200 + b"]" * 200, file="competition.yaml")


def test_invalid_yaml_names_the_line() -> None:
    with pytest.raises(BundleError, match=r"not valid YAML.*line 2"):
        load_yaml(b"title: x\n  bad: : indent\n", file="competition.yaml")


def test_unquoted_evalai_dates_become_datetimes_and_quoted_stay_text() -> None:
    data = load_yaml(b'a: 2019-01-01 00:00:00\nb: "2019-01-01 00:00:00"\n', file="c.yaml")
    assert type(data["a"]).__name__ == "datetime"
    assert data["b"] == "2019-01-01 00:00:00"
