#!/usr/bin/env bash
# Run the elsai vs strands-agents benchmarks in their own venv (.venv-bench).
#
#   bench/run.sh            # full run, ~3-4 minutes; writes bench/results/{latest.json,README.md}
#   bench/run.sh --quick    # smoke test (results/latest-quick.*)
#   bench/run.sh --only resume --repeats 7
#   bench/run.sh --check    # every per-cycle target in one run (bench/check.py); exit 1 on a miss
#
# strands-agents is a benchmark-only peer: it is installed here, never in the project venv.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${BENCH_VENV:-$ROOT/.venv-bench}"
PY="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV" >&2
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --upgrade pip
  "$VENV/bin/pip" install --quiet -e "$ROOT" --group "$ROOT/pyproject.toml:bench" "moto[s3,server]"
fi
if ! "$VENV/bin/python" -c "import strands, moto.server, elsai" 2>/dev/null; then
  echo "installing benchmark dependencies into $VENV" >&2
  "$VENV/bin/pip" install --quiet -e "$ROOT" --group "$ROOT/pyproject.toml:bench" "moto[s3,server]"
fi

# LangGraph (the files peer, bench/files_durable.py) has its own venv, pinned by bench/langgraph.lock.
LG_VENV="${LANGGRAPH_VENV:-$ROOT/.venv-langgraph}"
if ! "$LG_VENV/bin/python" -c "import langgraph.prebuilt, langgraph.checkpoint.sqlite" 2>/dev/null; then
  echo "creating $LG_VENV" >&2
  "$PY" -m venv "$LG_VENV"
  "$LG_VENV/bin/pip" install --quiet -r "$ROOT/bench/langgraph.lock"
fi

cd "$ROOT"
if [ "${1:-}" = "--check" ]; then
  shift
  exec "$VENV/bin/python" -m bench.check "$@"  # every issue target in one run; exit 1 on a miss
fi
exec "$VENV/bin/python" -m bench.run_all "$@"
