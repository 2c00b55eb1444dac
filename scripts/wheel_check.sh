#!/usr/bin/env bash
# CI proves the wheel, not the checkout: build it from the tracked files and check the sdist and
# the wheel as the package index sees them (scripts/dist_check.sh: twine check,
# check-wheel-contents, pyroma), install it into fresh venvs OUTSIDE the checkout (pyenv's 3.11,
# 3.12, 3.13), run the SDK smoke on each (scripts/wheel_smoke.py), then on 3.11 install
# [cdk,local] and run examples/hello-service's README from a copy: pytest -q, elsai local run with
# a kill, elsai jobs serve + jobs start --follow.
# Usage: scripts/wheel_check.sh [PYTHON_VERSION...]   (default: 3.11.7 3.12.1 3.13.0)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSIONS=("${@:-3.11.7 3.12.1 3.13.0}")
read -r -a VERSIONS <<<"${VERSIONS[*]}"
FULL="${VERSIONS[0]}"  # the full path (CDK app + local runtime) on the first version
WORK="$(mktemp -d /tmp/elsai-wheel.XXXXXX)"
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 NO_COLOR=1 XDG_CACHE_HOME="$WORK/cache"
unset PYTHONPATH
PIP=(-m pip install -q --disable-pip-version-check -c "$ROOT/locks/dev.txt")
quiet_pip() { "$@" 2> >(grep -v "^WARNING: Location 'file://" >&2); }  # the machine's absent local mirrors
step() { printf '\n== %s (%ss)\n' "$1" "$SECONDS"; }
tail_of() { tail -n "${2:-4}" "$1" | sed 's/^/   | /'; }

step "build the sdist and the wheel from the tracked files, check them (scripts/dist_check.sh)"
bash "$ROOT/scripts/dist_check.sh" "$WORK/dist" 2>&1 | sed 's/^/   | /'
WHEEL="$(ls "$WORK"/dist/elsai-*.whl)"
echo "   $(basename "$WHEEL")"

for version in "${VERSIONS[@]}"; do
  step "Python $version: a fresh venv with $(basename "$WHEEL")[mcp,otel], the SDK smoke"
  python="$(pyenv root)/versions/$version/bin/python"
  "$python" -m venv "$WORK/venv-$version"
  venv="$WORK/venv-$version/bin"
  quiet_pip "$venv/python" "${PIP[@]}" "$WHEEL[mcp,otel]"
  mkdir -p "$WORK/smoke-$version"
  (cd "$WORK/smoke-$version" && "$venv/python" "$ROOT/scripts/wheel_smoke.py" "$WORK/smoke-$version") \
    >"$WORK/smoke-$version.log" 2>&1 || { cat "$WORK/smoke-$version.log"; exit 1; }
  tail_of "$WORK/smoke-$version.log" 3
done

step "Python $FULL: [cdk,local] and examples/hello-service from a copy"
venv="$WORK/venv-$FULL/bin"
quiet_pip "$venv/python" "${PIP[@]}" "$WHEEL[cdk,local]" pytest
APP="$WORK/user/hello-service"
mkdir -p "$WORK/user"
cp -r "$ROOT/examples/hello-service" "$APP"
rm -rf "$APP/build" "$APP/cdk.out"
cd "$APP"
export PATH="$venv:$PATH"

step "pytest -q"
pytest -q -p no:cacheprovider >"$WORK/pytest.log" 2>&1 || { cat "$WORK/pytest.log"; exit 1; }
tail_of "$WORK/pytest.log" 1

step 'elsai local run --kill-in-tool 1 "Please greet Ada"'
elsai local run --kill-in-tool 1 "Please greet Ada" >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log"; exit 1; }
grep -q "resumed from after_model" "$WORK/run.log" && grep -q ": SUCCEEDED" "$WORK/run.log" \
  || { cat "$WORK/run.log"; echo "not killed, resumed and SUCCEEDED"; exit 1; }
grep -E "SIGKILLed|resumed from after_model|SUCCEEDED" "$WORK/run.log" | sed 's/^/   | /'

step 'elsai jobs serve & elsai jobs start --local "Please greet Grace" --follow'
elsai jobs serve --fast-retries >"$WORK/serve.log" 2>&1 &
SERVER=$!
for _ in $(seq 300); do grep -q "serving the local jobs API" "$WORK/serve.log" && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/serve.log"; exit 1; }; sleep 0.5; done
tail_of "$WORK/serve.log" 1
elsai jobs start --local "Please greet Grace" --follow >"$WORK/start.log" 2>&1 || { cat "$WORK/start.log"; exit 1; }
tail_of "$WORK/start.log" 3
kill "$SERVER"; wait "$SERVER" || true; SERVER=""

step "the wheel works outside the checkout on ${VERSIONS[*]}"
