#!/usr/bin/env bash
# AutoGen Studio's last release beside mnem-autogen, outside the workspace lock: Studio 0.4.2.2
# needs autogen-core <0.6, so this is also mnem-autogen on the 0.5 line. The environment is
# cached (Studio and its dependencies); the kit and mnem-autogen wheels are built afresh.
#
#   bash scripts/ci/studio.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/ci/lib.sh

export UV_PYTHON_DOWNLOADS=never
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"
STUDIO=autogenstudio==0.4.2.2
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/mnem-studio/${STUDIO//=/-}"
DIST=$(mktemp -d "${TMPDIR:-/tmp}/mnem-studio.XXXXXX")
trap 'rm -rf "$DIST"' EXIT

for package in mnem-adapter-kit mnem-autogen; do
    uv build --quiet --package "$package" --no-sources --wheel --out-dir "$DIST"
done
[ -x "$VENV/bin/python" ] || uv venv --quiet --python "$PYTHON" "$VENV"
say "$STUDIO and the built wheels in $VENV"
uv pip install --quiet --python "$VENV/bin/python" --reinstall-package mnem-adapter-kit \
    --reinstall-package mnem-autogen "$STUDIO" "$DIST"/*.whl
uv pip list --python "$VENV/bin/python" 2>/dev/null | grep -E '^(autogen|mnem)' | sed 's/^/   /'
"$VENV/bin/python" scripts/ci/studio_check.py
