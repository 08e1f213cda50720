#!/usr/bin/env bash
# Run the tests against the lowest versions the workspace declares it supports.
#
# Two kinds of resolution with `uv pip compile --resolution lowest-direct`, each installed into
# its own throwaway venv (never .venv, never uv.lock):
#   * the root `dev` group with every member editable: the whole suite, as `uv run pytest` runs it;
#   * each package on its own (the package, the kit's `testing` extra and the framework its tests
#     drive): its own tests, so a floor another package raises cannot hide a false one.
#
#   bash scripts/ci/lowest.sh            MNEM_CI_PYTHON=python3.10 picks another interpreter
set -euo pipefail
cd "$(dirname "$0")/../.."

export UV_PYTHON_DOWNLOADS=never
export PYTHONUNBUFFERED=1
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-lowest.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

say() { printf -- '-- %s\n' "$*"; }
started=$SECONDS
summary=()

# The framework packages each package's tests import, from the root dev group.
declare -A FRAMEWORK=(
    [mnem-adapter-kit]=""
    [mnem-autogen]="autogen-agentchat autogen-ext"
    [mnem-langgraph]="langgraph langgraph-checkpoint-sqlite"
    [mnem-mcp]=""
)
# The pins worth showing: the workspace's direct dependencies (display only).
SHOWN='^(mnem-agents|autogen-(core|agentchat|ext)|pydantic|typing-extensions|langgraph(-checkpoint)?(-sqlite)?|mcp|pytest(-asyncio)?|hypothesis)=='

# lowest LABEL PYTEST_TARGET SOURCE...: compile SOURCE at lowest-direct, install, run pytest.
lowest() {
    local label=$1 target=$2 venv=$WORK/$1 status=0 began=$SECONDS
    shift 2
    say "[$label] resolving $* with --resolution lowest-direct"
    uv pip compile --quiet --python "$PYTHON" --resolution lowest-direct \
        --no-header --no-annotate "$@" -o "$venv.txt"
    grep -E "$SHOWN" "$venv.txt" | paste -sd' ' | fold -s -w 100 | sed 's/^/   /'
    uv venv --quiet --python "$PYTHON" "$venv"
    uv pip sync --quiet --python "$venv/bin/python" - <"$venv.txt"
    uv pip check --quiet --python "$venv/bin/python"
    say "[$label] pytest $target"
    "$venv/bin/python" -m pytest -q -p no:cacheprovider $target || status=$?
    if [ "$status" -eq 5 ]; then
        summary+=("$label: no tests collected ($((SECONDS - began))s)")
    elif [ "$status" -ne 0 ]; then
        summary+=("$label: FAILED with the pins above ($((SECONDS - began))s)")
        failed=1
    else
        summary+=("$label: passed ($((SECONDS - began))s)")
    fi
}

failed=0
lowest workspace "" --group pyproject.toml:dev

for package in mnem-adapter-kit mnem-autogen mnem-langgraph mnem-mcp; do
    with=()
    for name in ${FRAMEWORK[$package]}; do with+=(--with "$name"); done
    uv run --quiet --no-project --isolated --python "$PYTHON" --with 'tomli; python_version < "3.11"' \
        python scripts/ci/lowest_requirements.py "$package" "${with[@]}" >"$WORK/$package.in"
    sed 's/^/   /' "$WORK/$package.in"
    lowest "$package" "packages/$package" - <"$WORK/$package.in"
done

say "lowest-direct summary ($("$PYTHON" --version))"
printf '   %s\n' "${summary[@]}"
say "lowest.sh finished in $((SECONDS - started))s"
exit "$failed"
