#!/usr/bin/env bash
# Install one package's built wheel in a fresh environment outside the workspace, with what its
# README's install line adds and every dependency from PyPI; then import every module and run
# the README's Python blocks there (scripts/ci/readme_blocks.py). The release workflow runs
# this before publishing; run it yourself to rehearse a release:
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
source scripts/ci/lib.sh

export UV_PYTHON_DOWNLOADS=never
export PYTHONUNBUFFERED=1
# mnem-crewai's README runs CrewAI: no telemetry or tracing from a release job.
export CREWAI_DISABLE_TELEMETRY=true OTEL_SDK_DISABLED=true CREWAI_TRACING_ENABLED=false
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"

shopt -s nullglob
wheels=("$DIST/${PACKAGE//-/_}"-*.whl)
[ ${#wheels[@]} -eq 1 ] || { echo "expected one $PACKAGE wheel in $DIST, found ${#wheels[@]}" >&2; exit 1; }
case $PACKAGE in  # as the package's README installs it
    mnem-adapter-kit) wanted=("${PACKAGE}[testing] @ file://${wheels[0]}") ;;
    mnem-autogen) wanted=("${PACKAGE}[agentchat] @ file://${wheels[0]}") ;;
    mnem-langgraph) wanted=("${PACKAGE}[index] @ file://${wheels[0]}" langgraph) ;;
    *) wanted=("$PACKAGE @ file://${wheels[0]}") ;;
esac
markdown_docs=$(locked pytest-markdown-docs)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-release-smoke.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/readme"
cp scripts/ci/check_installed.py scripts/ci/readme_blocks.py "$WORK"/
cp "packages/$PACKAGE/README.md" "$WORK/readme/"
cd "$WORK"

say "fresh environment for $(basename "${wheels[0]}") ($("$PYTHON" --version)), dependencies from PyPI"
uv venv --quiet --python "$PYTHON" venv
uv pip install --quiet --python venv/bin/python --find-links "$DIST" "${wanted[@]}" "$markdown_docs"
uv pip check --python venv/bin/python
venv/bin/python -I check_installed.py "$DIST" "$ROOT" "$PACKAGE"
say "packages/$PACKAGE/README.md: its Python blocks, from the wheel"
(cd readme && PATH="$WORK/venv/bin:$PATH" PYTHONPATH="$WORK" ../venv/bin/python -m pytest -v \
    -p no:cacheprovider -p readme_blocks --markdown-docs README.md)
say "$PACKAGE installs and runs from its wheel"
