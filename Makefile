# Podium's everyday commands. `make run` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PODIUM_DATABASE_URL ?= sqlite:///./.podium/podium.db
export PODIUM_DATA_DIR ?= ./.podium/data

.PHONY: run test lint install install-test bench docs clean

$(BIN)/podium: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.test-deps: $(BIN)/podium pyproject.toml
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

install: $(BIN)/podium

install-test: $(VENV)/.test-deps

run: install
	$(BIN)/podium serve --demo

test: install-test
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The gate CI runs before the tests: lint, format and strict types on the engine.
lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: install-test
	$(BIN)/python bench/bench_metrics.py
	$(BIN)/python bench/bench_intake.py

$(VENV)/.docs-deps: $(BIN)/podium pyproject.toml
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $@

# The documentation site: the metric reference regenerated from the registry, then a strict build
# (a broken link or anchor, or a page missing from the navigation, fails it) into site/. Under
# CI=true the reference is only checked, so a stale committed docs/metrics.md fails CI rather than
# being rewritten there. (NO_MKDOCS_2_WARNING silences Material's banner about its successor.)
docs: $(VENV)/.docs-deps
	$(BIN)/python -m app.metrics.docs $(if $(filter true,$(CI)),--check)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d site

clean:
	rm -rf .podium .pytest_cache site
