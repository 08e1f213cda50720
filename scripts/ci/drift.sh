#!/usr/bin/env bash
# The suite against the newest release of every dependency, so upstream changes show here first
# (docs/adr/0012), in a copy of the checkout: 1. `uv lock --upgrade` (what `pip install` gets
# today); 2. the newest mnem-agents even past our bound (our range check, expected to object, only
# printed), skipped while there is none.
source "$(dirname "$0")/lib.sh"
scratch drift
git ls-files -z --cached --others --exclude-standard | tar -c --null -T - -f - | tar -x -C "$WORK"
cd "$WORK" && git init -q  # a checkout, as the suite expects (what git ignores, for one)
export UV_PROJECT_ENVIRONMENT=$WORK/.venv

say "pass 1: uv lock --upgrade (the newest versions our ranges admit), $("$PYTHON" --version)"
uv lock --upgrade 2>&1 | sed 's/^/   /'  # what changed (Updated, Added, Removed), or why it failed
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
