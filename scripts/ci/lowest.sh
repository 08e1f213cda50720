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
# Declared floors this check has shown to be false, with the floor that holds. The package is
# first tested strictly (its result is reported every run, and says when this entry can go),
# then with the true floor as a constraint so the rest of the check still means something.
# Delete an entry once the package's pyproject.toml declares the true floor (and uv.lock follows).
declare -A KNOWN_FALSE_FLOORS=(
    # pyproject.toml says langgraph-checkpoint>=4.3,<5, but with 4.3.0 a delete under a label
    # holding a NUL is not refused (test_errors.py::...straight_to_batch[op4]); 4.3.1 passes all.
    [mnem-langgraph]="langgraph-checkpoint>=4.3.1"
)
# The pins worth showing: the workspace's direct dependencies (display only).
SHOWN='^(mnem-agents|autogen-(core|agentchat|ext)|pydantic|typing-extensions|langgraph(-checkpoint)?(-sqlite)?|mcp|pytest(-asyncio)?|hypothesis)=='

# attempt NAME TARGET CONSTRAINT SOURCE...: resolve SOURCE at lowest-direct (with CONSTRAINT,
# if any) into a fresh venv and run pytest TARGET there. Returns pytest's status.
attempt() {
    local name=$1 target=$2 constraint=$3 venv=$WORK/$1
    shift 3
    local constraints=()
    if [ -n "$constraint" ]; then
        printf '%s\n' "$constraint" >"$venv.constraints.txt"
        constraints=(--constraint "$venv.constraints.txt")
    fi
    say "[$name] resolving $* with --resolution lowest-direct ${constraint:+(constraint: $constraint)}"
    uv pip compile --quiet --python "$PYTHON" --resolution lowest-direct \
        --no-header --no-annotate "${constraints[@]}" "$@" -o "$venv.txt"
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
    waiver=${KNOWN_FALSE_FLOORS[$package]:-}
    attempt "$package" "packages/$package" "" - <"$WORK/$package.in" || status=$?
    if [ -n "$waiver" ] && [ "$status" -eq 0 ]; then
        note "$package" 0 $((SECONDS - began)) "KNOWN_FALSE_FLOORS[$package] is no longer needed: delete it"
    elif [ -n "$waiver" ]; then
        say "[$package] WARNING: fails at its declared floors; retrying with the known true floor $waiver"
        status=0
        attempt "$package-floor" "packages/$package" "$waiver" - <"$WORK/$package.in" || status=$?
        note "$package" "$status" $((SECONDS - began)) \
            "WARNING: only with $waiver; its declared floor is false, fix packages/$package/pyproject.toml"
    else
        note "$package" "$status" $((SECONDS - began))
    fi
done

# Last, so the suite's own summary closes the output.
began=$SECONDS status=0
attempt workspace "" "$(printf '%s\n' "${KNOWN_FALSE_FLOORS[@]}")" --group pyproject.toml:dev || status=$?
note workspace "$status" $((SECONDS - began)) \
    "${KNOWN_FALSE_FLOORS[*]:+with the known true floors: ${KNOWN_FALSE_FLOORS[*]}}"

say "lowest-direct summary ($("$PYTHON" --version))"
printf '   %s\n' "${summary[@]}"
say "lowest.sh finished in $((SECONDS - started))s"
exit "$failed"
