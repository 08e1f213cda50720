#!/usr/bin/env bash
# Run the whole suite against the newest release of every dependency, so an upstream change is
# seen here before users meet it (docs/adr/0012). Two passes, in a throwaway copy of the
# checkout (uv.lock and .venv here are never touched):
#   1. `uv lock --upgrade`: the newest versions our declared ranges admit, which is what a user's
#      `pip install` gets today; `uv pip check` and the suite;
#   2. the newest mnem-agents even past our upper bound, which is what widening the bound would
#      give users; the suite again (our own range check is expected to object, so it only
#      prints). Skipped, saying so, while no such release exists.
#
#   bash scripts/ci/drift.sh             MNEM_CI_PYTHON=python3.13 picks another interpreter
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/ci/lib.sh

export UV_PYTHON_DOWNLOADS=never
export PYTHONUNBUFFERED=1
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-drift.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
git ls-files -z --cached --others --exclude-standard | tar -c --null -T - -f - | tar -x -C "$WORK"
cd "$WORK"
export UV_PROJECT_ENVIRONMENT=$WORK/.venv
started=$SECONDS

say "pass 1: uv lock --upgrade (the newest versions our ranges admit), $("$PYTHON" --version)"
changes=$(uv lock --upgrade 2>&1 | grep -E '^(Updated|Added|Removed) ' || true)
echo "${changes:-no newer versions than uv.lock holds}" | sed 's/^/   /'
uv sync --locked --all-packages --python "$PYTHON" --quiet
uv pip check
engine=$(uv pip show mnem-agents | sed -n 's/^Version: //p')
say "pass 1: the whole suite with mnem-agents $engine"
uv run --no-sync pytest -q -p no:cacheprovider

say "pass 2: the newest mnem-agents, past our upper bound"
uv pip install --quiet --upgrade "mnem-agents>=$engine"
newest=$(uv pip show mnem-agents | sed -n 's/^Version: //p')
if [ "$newest" = "$engine" ]; then
    say "pass 2: mnem-agents $engine is the newest release: nothing past our bound to try"
else
    uv pip check | sed 's/^/   (expected) /' || true
    say "pass 2: the whole suite with mnem-agents $newest"
    uv run --no-sync pytest -q -p no:cacheprovider
fi
say "drift.sh finished in $((SECONDS - started))s"
