# One command to set up and run the main job offline, one to run the tests.
VENV ?= .venv
PY := $(VENV)/bin/python
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export POWERTOOLS_TRACE_DISABLED := true

.PHONY: setup demo test lint bench synth checkov conformance

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	@if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; fi
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/elsai local run "Process orders 1, 2 and 3"

test: setup
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check elsai lambdas infra tests bench
	$(VENV)/bin/mypy elsai

synth: setup
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH npx cdk synth -q

bench:
	bash bench/run.sh

# checkov on the synthesized templates, in its own venv; skips (with reasons): infra/checkov_skips.txt
checkov: setup
	bash scripts/checkov.sh

# A second Step Functions engine (LocalStack's interpreter, in-process) walks the synthesized
# definition: tests/conformance. Its own venv: localstack-core pins its own dependencies.
CONFORMANCE_VENV ?= .venv-conformance
$(CONFORMANCE_VENV)/.installed: pyproject.toml
	python3 -m venv $(CONFORMANCE_VENV)
	$(CONFORMANCE_VENV)/bin/python -m pip install -q --upgrade pip
	$(CONFORMANCE_VENV)/bin/python -m pip install -q ".[conformance]"
	touch $@

conformance: setup $(CONFORMANCE_VENV)/.installed
	$(PY) -m tests.conformance.export_definitions build/conformance
	$(CONFORMANCE_VENV)/bin/python -m pytest -p no:cacheprovider -c tests/conformance/pytest.ini tests/conformance
