# `make demo` and `make test` each set everything up on a fresh clone (Python 3.11+ and make).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PORT   ?= 8501
HOST   ?= 127.0.0.1
DATA   ?= data
CODE   := reviewer_app storage scripts tests

.PHONY: setup demo test test-fast lint typecheck browser-deps bench pre-commit clean delete-data

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

# Browser tests drive Debian's Chromium through Playwright; no browser is ever downloaded.
browser-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = "0" ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "Chromium missing: run 'sudo apt-get install chromium' for the browser tests"; exit 1; fi; \
	fi

demo: setup
	$(BIN)/blind-review demo --port $(PORT) --host $(HOST)

# Lint, format check, type check, then the whole suite (Monte Carlo `slow` tests and the browser included),
# printing the 15 slowest tests. Every step runs even when an earlier one fails, so one run shows every
# problem; the target fails if any step did, and says which.
CHECKS := "$(BIN)/ruff check $(CODE)" "$(BIN)/ruff format --check $(CODE)" "$(BIN)/mypy" \
          "$(BIN)/python -m pytest -q -p no:cacheprovider --durations=15"
test: setup browser-deps
	@failed=""; for step in $(CHECKS); do \
	  echo "+ $$step"; $$step || failed="$$failed\n  $$step"; \
	done; \
	if [ -n "$$failed" ]; then printf "make test failed in:%b\n" "$$failed"; exit 1; fi

test-fast: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not browser and not slow" --durations=15

lint: setup
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)

typecheck: setup
	$(BIN)/mypy

bench: setup
	$(BIN)/python scripts/bench_load.py

pre-commit: setup
	$(BIN)/pre-commit install

# Build and cache leftovers only. Never the data directory: it holds the default database (ratings people
# typed in); `make delete-data CONFIRM=yes` is the one target that removes it.
clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build *.egg-info
	find reviewer_app storage scripts tests -name __pycache__ -type d -prune -exec rm -rf {} +

delete-data:
	@if [ "$(CONFIRM)" != "yes" ]; then \
	  echo "This deletes '$(DATA)/': the default SQLite database (every batch, person and rating) and its images."; \
	  echo "Run 'make delete-data CONFIRM=yes' to do it."; exit 1; \
	fi
	rm -rf -- $(DATA)
