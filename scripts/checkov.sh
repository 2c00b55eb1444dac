#!/usr/bin/env bash
# checkov on the synthesized template(s), with every skipped check in infra/checkov_skips.txt.
#
#   bash scripts/checkov.sh        # (make checkov) synth default + all-options templates, scan both
#
# checkov pins its own dependencies, so it lives in a separate venv (.venv-checkov, not
# committed). Exit status: non-zero if any check that is not skipped fails.
set -euo pipefail
cd "$(dirname "$0")/.."

CHECKOV_VENV=${CHECKOV_VENV:-.venv-checkov}
CHECKOV_VERSION=${CHECKOV_VERSION:-3.3.30}
PY=${PY:-.venv/bin/python}
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20

if [ ! -x "$CHECKOV_VENV/bin/checkov" ]; then
  echo "== creating $CHECKOV_VENV with checkov==$CHECKOV_VERSION"
  python3 -m venv "$CHECKOV_VENV"
  "$CHECKOV_VENV/bin/pip" install -q --upgrade pip
  "$CHECKOV_VENV/bin/pip" install -q "checkov==$CHECKOV_VERSION"
fi

OUT=build/checkov
mkdir -p "$OUT"
"$PY" - "$OUT" <<'PY'
import json, sys
from infra.synth import synth_template
out = sys.argv[1]
full = {"sessionRetentionDays": 30, "maxModelCalls": 100, "maxConcurrentSlices": 5}
for name, context in (("default", None), ("full", full)):
    with open(f"{out}/{name}.template.json", "w") as f:
        json.dump(synth_template(context), f, indent=1)
PY

# One check id per line, then its reason; '#' lines are comments.
SKIPS=$(grep -v '^\s*#' infra/checkov_skips.txt | awk 'NF {print $1}' | paste -sd, -)
for t in "$OUT"/default.template.json "$OUT"/full.template.json; do
  echo "== checkov $t (skipping: $SKIPS)"
  "$CHECKOV_VENV/bin/checkov" -f "$t" --framework cloudformation --compact --quiet --skip-download \
    --skip-check "$SKIPS"
done
