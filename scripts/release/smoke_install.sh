#!/usr/bin/env bash
# Install one package's built wheel in a fresh environment outside the workspace, its
# dependencies from PyPI only, then import every module and run its smoke script there.
# The release workflow runs this before publishing; run it yourself to rehearse a release:
#
#   bash scripts/release/smoke_install.sh DIST_DIR PACKAGE
#
# DIST_DIR is also searched for dependencies (--find-links): in the release job it holds only
# PACKAGE, so an adapter needs its kit range on PyPI already; in a rehearsal you can put the kit
# wheel beside it.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DIST_DIR PACKAGE" >&2; exit 2; }
DIST=$(cd "$1" && pwd)
PACKAGE=$2
cd "$(dirname "$0")/../.."
ROOT=$PWD

export UV_PYTHON_DOWNLOADS=never
export PYTHONUNBUFFERED=1
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"
MODULE=${PACKAGE//-/_}

shopt -s nullglob
wheels=("$DIST/$MODULE"-*.whl)
[ ${#wheels[@]} -eq 1 ] || { echo "expected one $MODULE wheel in $DIST, found ${#wheels[@]}" >&2; exit 1; }
wheel=${wheels[0]}
extras=""
[ "$PACKAGE" = mnem-adapter-kit ] && extras="[testing]"  # the conformance kit imports pytest

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-release-smoke.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
smoke="scripts/smoke/${PACKAGE#mnem-}_smoke.py"
smoke=${smoke//-/_}
cp scripts/ci/check_installed.py "$WORK"/
[ -f "$smoke" ] && cp "$smoke" "$WORK"/
cd "$WORK"

echo "-- fresh environment for $(basename "$wheel") ($("$PYTHON" --version)), dependencies from PyPI"
uv venv --quiet --python "$PYTHON" venv
uv pip install --quiet --python venv/bin/python --find-links "$DIST" "$PACKAGE$extras @ file://$wheel"
uv pip check --python venv/bin/python
venv/bin/python -I check_installed.py "$DIST" "$ROOT" "$PACKAGE"
if [ -f "$(basename "$smoke")" ]; then
    echo "-- $smoke"
    venv/bin/python -I "$(basename "$smoke")" | sed 's/^/   | /'
else
    echo "-- no $smoke: import check only"
fi
echo "-- $PACKAGE installs and runs from its wheel"
