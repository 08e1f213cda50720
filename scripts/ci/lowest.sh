#!/usr/bin/env bash
# Run the tests against the lowest versions the workspace declares it supports.
#
# Resolutions with `uv pip compile --resolution lowest-direct`, each installed into its own
# throwaway venv (never .venv, never uv.lock):
#   * each package on its own (the package, the kit's `testing` extra and the framework its tests
#     drive): its own tests, so a floor another package raises cannot hide a false one;
#   * the root `dev` group with every member editable: the whole suite, as `uv run pytest` runs it.
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
failed=0

PACKAGES=(mnem-adapter-kit mnem-autogen mnem-langgraph mnem-mcp)
# The framework packages each package's tests import, from the root dev group.
declare -A FRAMEWORK=(
    [mnem-adapter-kit]=""
    [mnem-autogen]="autogen-agentchat autogen-ext"
    [mnem-langgraph]="langgraph langgraph-checkpoint-sqlite"
    [mnem-mcp]=""
)
# The pins worth showing: the workspace's direct dependencies (display only).
SHOWN='^(mnem-agents|autogen-(core|agentchat|ext)|pydantic|typing-extensions|langgraph(-checkpoint)?(-sqlite)?|mcp|pytest(-asyncio)?|hypothesis)=='

# attempt NAME TARGET SOURCE...: resolve SOURCE at lowest-direct into a fresh venv and run
# pytest TARGET there. Returns pytest's status.
attempt() {
    local name=$1 target=$2 venv=$WORK/$1
    shift 2
    say "[$name] resolving $* with --resolution lowest-direct"
    uv pip compile --quiet --python "$PYTHON" --resolution lowest-direct \
        --no-header --no-annotate "$@" -o "$venv.txt"
    grep -E "$SHOWN" "$venv.txt" | paste -sd' ' | fold -s -w 100 | sed 's/^/   /'
    uv venv --quiet --python "$PYTHON" "$venv"
    uv pip sync --quiet --python "$venv/bin/python" - <"$venv.txt"
    uv pip check --quiet --python "$venv/bin/python"
    say "[$name] pytest ${target:-(the whole suite)}"
    "$venv/bin/python" -m pytest -q -p no:cacheprovider $target
}

note() {  # note LABEL STATUS SECONDS [DETAIL]
    if [ "$2" -eq 0 ]; then
        summary+=("$1: passed ($3s)${4:+; $4}")
    else
        summary+=("$1: FAILED at the pins above ($3s)${4:+; $4}")
        failed=1
    fi
}

for package in "${PACKAGES[@]}"; do
    if ! compgen -G "packages/$package/tests/test_*.py" >/dev/null; then
        say "[$package] has no tests yet: nothing to run at its lowest versions"
        summary+=("$package: no tests yet")
        continue
    fi
    with=()
    for name in ${FRAMEWORK[$package]}; do with+=(--with "$name"); done
    uv run --quiet --no-project --isolated --python "$PYTHON" --with 'tomli; python_version < "3.11"' \
        python scripts/ci/lowest_requirements.py "$package" "${with[@]}" >"$WORK/$package.in"
    sed 's/^/   /' "$WORK/$package.in"
    began=$SECONDS status=0
    attempt "$package" "packages/$package" - <"$WORK/$package.in" || status=$?
    note "$package" "$status" $((SECONDS - began))
done

# Last, so the suite's own summary closes the output.
began=$SECONDS status=0
attempt workspace "" --group pyproject.toml:dev || status=$?
note workspace "$status" $((SECONDS - began))

say "lowest-direct summary ($("$PYTHON" --version))"
printf '   %s\n' "${summary[@]}"
say "lowest.sh finished in $((SECONDS - started))s"
exit "$failed"
