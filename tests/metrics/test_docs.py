"""docs/metrics.md is generated from the registry and must be regenerated when a metric changes."""

import doctest
import importlib
import pkgutil

import pytest

import app.metrics
from app.metrics import all_metrics
from app.metrics.docs import DOCS_PATH, render_markdown


def test_docs_metrics_md_is_up_to_date():
    assert DOCS_PATH.read_text(encoding="utf-8") == render_markdown(), (
        "docs/metrics.md is stale: run `python -m app.metrics.docs`"
    )


@pytest.mark.parametrize("metric", all_metrics(), ids=lambda m: m.name)
def test_every_metric_has_a_row_and_a_section_listing_its_differences(metric):
    text = render_markdown()
    assert f"| [`{metric.name}`](#{metric.name}) | {metric.direction} |" in text
    section = text.split(f"### `{metric.name}`", 1)[1].split("\n### ", 1)[0]
    assert metric.reference.replace("|", "\\|") in section
    for name in metric.params.model_fields:
        assert f"`{name}`" in section
    for difference in metric.differences:
        assert difference in section


MODULES = [
    importlib.import_module(f"app.metrics.{info.name}")
    for info in pkgutil.iter_modules(app.metrics.__path__)
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
