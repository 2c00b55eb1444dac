#!/usr/bin/env bash
# The distributions as the package index and its users' tools see them. Builds the sdist and the
# wheel from the tracked files (a copy outside the checkout), then checks them with pinned tools in
# a throwaway venv (never the dev group): `twine check --strict` (metadata, and the long
# description renders), `check-wheel-contents` ([tool.check-wheel-contents] in pyproject.toml),
# pyroma at 10/10 with one check skipped (below), the license file in both, and no relative link
# left in the long description (setup.py makes them absolute).
# Usage: scripts/dist_check.sh [OUT_DIR]   (leaves elsai-*.tar.gz and elsai-*.whl in OUT_DIR)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d /tmp/elsai-dist.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
OUT="${1:-$WORK/dist}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
TOOLS=(build==1.6.1 twine==7.0.0 check-wheel-contents==0.6.3 pyroma==5.0.1)
# pyroma's AuthorEmail: the project has no contact address yet, and a made-up one would be worse
# than none. Give the authors entry in pyproject.toml an email and drop the skip.
PYROMA_SKIP=AuthorEmail
step() { printf '\n== %s (%ss)\n' "$1" "$SECONDS"; }

step "the tools in a throwaway venv: ${TOOLS[*]}"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --disable-pip-version-check "${TOOLS[@]}" \
  2> >(grep -v "^WARNING: Location 'file://" >&2)  # the machine's absent local mirrors
bin="$WORK/venv/bin"

step "build the sdist and the wheel from the tracked files"
mkdir -p "$WORK/src"
(cd "$ROOT" && git ls-files -z -- pyproject.toml setup.py LICENSE README.md elsai lambdas \
  | xargs -0 cp --parents -t "$WORK/src")
"$bin/python" -m build -o "$OUT" "$WORK/src" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
SDIST="$(ls "$OUT"/elsai-*.tar.gz)"
WHEEL="$(ls "$OUT"/elsai-*.whl)"
echo "   $(basename "$SDIST") $(basename "$WHEEL")"

step "twine check --strict"
"$bin/twine" check --strict "$SDIST" "$WHEEL"

step "check-wheel-contents"
(cd "$WORK" && "$bin/check-wheel-contents" --config "$ROOT/pyproject.toml" "$WHEEL")

step "pyroma (10/10; skipped: $PYROMA_SKIP)"
(cd "$WORK" && "$bin/pyroma" --min 10 --skip-tests "$PYROMA_SKIP" --file "$SDIST" 2>&1 | grep -vE "^(Installing|- |Getting|Creating|Found)")

step "the license and the absolute links, in what was built"
"$bin/python" - "$SDIST" "$WHEEL" <<'PY'
import re, sys, tarfile, zipfile
from email import message_from_bytes

sdist, wheel = sys.argv[1:]
with zipfile.ZipFile(wheel) as whl:
    names = whl.namelist()
    metadata = message_from_bytes(whl.read(next(n for n in names if n.endswith(".dist-info/METADATA"))))
with tarfile.open(sdist) as tar:
    in_sdist = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "no LICENSE in the wheel"
assert "LICENSE" in in_sdist, "no LICENSE in the sdist"
assert metadata["License-Expression"] == "Apache-2.0", metadata["License-Expression"]
body = re.sub(r"(?ms)^ {0,3}```.*?^ {0,3}```[^\n]*$", "", metadata.get_payload())
targets = re.findall(r"\]\(([^)\s]+)", body)
relative = [t for t in targets if not re.match(r"^(https?:|mailto:)", t)]
assert targets and not relative, relative
print(f"   LICENSE in both; {len(targets)} links on the package page, none relative")
PY
