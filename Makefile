# Podium's everyday commands. `make run` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PODIUM_DATABASE_URL ?= sqlite:///./.podium/podium.db
export PODIUM_DATA_DIR ?= ./.podium/data

.PHONY: run test test-fast lint install install-test bench docs clean

# Installs go through uv (a PyPI package, put in the venv by pip): it fetches and unpacks in
# parallel: 17 s for the test set-up of a fresh clone on a 2-core machine (the venv and uv
# included), where pip took 75 s (half of it unpacking wheels one by one). Where uv cannot be
# had, pip does the same install.
PIP_INSTALL = ($(BIN)/pip install --quiet uv && $(BIN)/uv pip install --quiet --python $(BIN)/python $(1)) \
	|| $(BIN)/pip install --quiet --no-compile $(1)

$(BIN)/podium: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(call PIP_INSTALL,-e .)
	touch $@

# One resolve for the app and its test tools, and no byte-compiling of every file installed (the
# imports compile what they use). The test extra holds the docs extra, so `make docs` needs no
# install of its own after it.
$(VENV)/.test-deps: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(call PIP_INSTALL,-e '.[test]')
	touch $(BIN)/podium $@ $(VENV)/.docs-deps

install: $(BIN)/podium

install-test: $(VENV)/.test-deps

# `make run PORT=8080` (or HOST=0.0.0.0) serves elsewhere; the demo prints its links on it.
PORT ?= 8000
HOST ?= 127.0.0.1
run: install
	$(BIN)/podium serve --demo --host $(HOST) --port $(PORT)

# The suite in parallel, one process per core (pytest-xdist). A module's tests keep to one worker
# (--dist loadfile): a module-scoped server or browser starts once. Not loadgroup: xdist 3.8 marks
# its groups by rewriting Node._nodeid, which pytest 9 no longer reads, so the groups split.
PYTEST_WORKERS ?= auto
XDIST := -n $(PYTEST_WORKERS) --dist loadfile
# The full suite waits a third of its time (servers starting, processes killed and restarted,
# leases lapsing): two workers a core keep the cores busy through those waits (537 s -> 497 s
# here on 2 cores). The fast tier computes throughout: one a core.
FULL_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) * 2 )))

# The suite starts a hundred Python processes (the xdist workers, servers, Celery workers, CLI
# runs), each importing the app and its libraries. With PYTHONDONTWRITEBYTECODE set (some shells
# and containers set it) none of them keeps the bytecode it compiles, so each compiles everything
# again: about 20 s of CPU for every worker's collection alone. The caches land in __pycache__
# directories, which git ignores.
unexport PYTHONDONTWRITEBYTECODE

# The full suite: the README's and CI's test command.
test: install-test
	$(BIN)/python -m pytest -n $(if $(filter auto,$(PYTEST_WORKERS)),$(FULL_WORKERS),$(PYTEST_WORKERS)) --dist loadfile $(PYTEST_ARGS)

# The inner loop: no browser, no PostgreSQL or Redis, nothing that starts servers or jails.
test-fast: install-test
	$(BIN)/python -m pytest $(XDIST) -m "not slow and not browser and not postgres and not redis" $(PYTEST_ARGS)

# The gate CI runs before the tests: lint, format and strict types on the engine.
lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: install-test
	$(BIN)/python bench/bench_metrics.py
	$(BIN)/python bench/bench_intake.py

$(VENV)/.docs-deps: $(BIN)/podium pyproject.toml
	$(call PIP_INSTALL,-e '.[docs]')
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
