#!/usr/bin/env bash
# studio_check.py: AutoGen Studio's last release (needs autogen-core <0.6, so mnem-autogen on
# 0.5 too) beside fresh kit and mnem-autogen wheels, in a cached environment outside the lock.
source "$(dirname "$0")/lib.sh"
STUDIO=autogenstudio==0.4.2.2
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/mnem-studio/${STUDIO//=/-}"
scratch studio
for package in mnem-adapter-kit mnem-autogen; do
    uv build --quiet --package "$package" --no-sources --wheel --out-dir "$WORK"
done
[ -x "$VENV/bin/python" ] || uv venv --quiet --python "$PYTHON" "$VENV"
say "$STUDIO and the built wheels in $VENV"
uv pip install --quiet --python "$VENV/bin/python" --reinstall-package mnem-adapter-kit \
    --reinstall-package mnem-autogen "$STUDIO" "$WORK"/*.whl
uv pip list --python "$VENV/bin/python" 2>/dev/null | grep -E '^(autogen|mnem)' | sed 's/^/   /'
"$VENV/bin/python" scripts/ci/studio_check.py
