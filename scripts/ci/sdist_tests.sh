#!/usr/bin/env bash
# Run each package's own tests from its unpacked sdist, as a downstream packager would: the
# package's built wheel and its `test` dependency group (read from the sdist's pyproject.toml)
# in a fresh environment outside the workspace, pytest configured by the sdist alone.
#
#   bash scripts/ci/sdist_tests.sh DIST_DIR [PACKAGE ...]     (wheels.sh builds DIST_DIR)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 DIST_DIR [PACKAGE ...]" >&2; exit 2; }
DIST=$(cd "$1" && pwd)
shift
cd "$(dirname "$0")/../.."
ROOT=$PWD
source scripts/ci/lib.sh

export UV_PYTHON_DOWNLOADS=never
export PYTHONUNBUFFERED=1
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"
PACKAGES=("$@")
[ ${#PACKAGES[@]} -gt 0 ] || PACKAGES=(mnem-adapter-kit mnem-autogen mnem-langgraph mnem-mcp mnem-openai-agents mnem-agent-framework)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-sdist.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
built_pins "$DIST" >"$WORK/constraints.txt"
cp scripts/ci/check_installed.py "$WORK"/
started=$SECONDS
failed=0

for package in "${PACKAGES[@]}"; do
    module=${package//-/_}
    sdists=("$DIST/$module"-*.tar.gz)
    [ ${#sdists[@]} -eq 1 ] && [ -f "${sdists[0]}" ] || { echo "no single sdist of $package in $DIST" >&2; exit 1; }
    began=$SECONDS
    tar -xzf "${sdists[0]}" -C "$WORK"
    source_dir=$WORK/$(basename "${sdists[0]}" .tar.gz)
    venv=$WORK/venv-$package
    say "[$package] $(basename "${sdists[0]}"): its wheel and its test group in a fresh environment"
    uv venv --quiet --python "$PYTHON" "$venv"
    uv pip install --quiet --python "$venv/bin/python" --find-links "$DIST" \
        --constraint "$WORK/constraints.txt" "$package" --group "$source_dir/pyproject.toml:test"
    uv pip check --quiet --python "$venv/bin/python"
    (cd "$WORK" && "$venv/bin/python" -I check_installed.py "$DIST" "$ROOT" "$package")
    say "[$package] pytest in $(basename "$source_dir")/"
    status=0
    (cd "$source_dir" && "$venv/bin/python" -m pytest -q -p no:cacheprovider) || status=$?
    say "[$package] $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - began))s"
    [ "$status" -eq 0 ] || failed=1
done
say "sdist_tests.sh finished in $((SECONDS - started))s"
exit "$failed"
