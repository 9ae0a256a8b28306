# Two entry points: `make demo` and `make test`. Each creates .venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	@sh scripts/cjk-font.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/qkv demo

test: $(STAMP)
	@sh scripts/chromium.sh
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/train_speed.py
	$(PY) benchmarks/generate_speed.py

clean:
	rm -rf $(VENV) runs
