# `make demo` and `make test` each set everything up on a fresh clone (Python 3.11+ and make).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PORT   ?= 8501

.PHONY: setup demo test test-fast browser-deps lint bench clean

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
	$(BIN)/blind-review demo --port $(PORT)

test: setup browser-deps
	$(BIN)/ruff check reviewer_app storage scripts tests
	$(BIN)/python -m pytest -q -p no:cacheprovider

test-fast: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not browser"

lint: setup
	$(BIN)/ruff check reviewer_app storage scripts tests
	$(BIN)/ruff format --check reviewer_app storage scripts tests

bench: setup
	$(BIN)/python scripts/bench_load.py

clean:
	rm -rf $(VENV) data .pytest_cache
