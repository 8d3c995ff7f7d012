"""Factories for custom-metric tests: metric files and CSV files written to ``tmp_path``."""

import textwrap
from pathlib import Path

import pytest


@pytest.fixture
def metric_file(tmp_path: Path):
    """``metric_file(source)``: write a metric's (dedented) source and return its path."""
    made = iter(range(1, 1000))

    def make(source: str) -> Path:
        path = tmp_path / f"metric_{next(made)}.py"
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        return path

    return make


@pytest.fixture
def csv_file(tmp_path: Path):
    """``csv_file(name, header, rows)``: write a small CSV and return its path."""

    def make(name: str, header: list[str], rows: list[list[object]]) -> Path:
        lines = [",".join(header)] + [",".join(str(cell) for cell in row) for row in rows]
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return make
