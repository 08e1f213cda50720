#!/usr/bin/env bash
# Run the tests against the lowest versions the workspace declares it supports.
#
# Resolutions with `uv pip compile --resolution lowest-direct`, each installed into its own
# throwaway venv (never .venv, never uv.lock):
#   * each package on its own (the package, its `test` dependency group): its own tests, so a
#     floor another package raises cannot hide a false one. An adapter gets the adapter kit at
#     exactly the lowest version it declares, installed from a wheel: from PyPI once that kit is
#     released, else built from the workspace while the workspace kit is that version;
#   * the root `dev` group with every member editable: the whole suite, as `uv run pytest` runs it.
#
#   bash scripts/ci/lowest.sh            MNEM_CI_PYTHON=python3.10 picks another interpreter
#   MNEM_LOWEST_ONLY="mnem-mcp workspace" bash scripts/ci/lowest.sh    runs only those
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source scripts/ci/lib.sh

export UV_PYTHON_DOWNLOADS=never
export PYTHONUNBUFFERED=1
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"
KIT=mnem-adapter-kit
PACKAGES=("$KIT" mnem-autogen mnem-langgraph mnem-mcp mnem-openai-agents mnem-agent-framework mnem-crewai)
ONLY=" ${MNEM_LOWEST_ONLY:-${PACKAGES[*]} workspace} "

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-lowest.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

started=$SECONDS
summary=()
failed=0
# The pins worth showing: the workspace's direct dependencies (display only).
SHOWN='^(mnem-agents|mnem-adapter-kit|autogen-(core|agentchat|ext)|pydantic|typing-extensions|langgraph(-checkpoint)?|mcp|openai-agents|agent-framework-core|pytest(-asyncio)?|hypothesis)=='

helper() {
    uv run --quiet --no-project --isolated --python "$PYTHON" --with packaging \
        --with 'tomli; python_version < "3.11"' python scripts/ci/lowest_requirements.py "$@"
}

# kit_source FLOOR: set KIT_LINKS (extra --find-links for the kit) and KIT_FROM (where it
# comes from) for an adapter whose kit floor is FLOOR. It sets variables, so it runs in this
# shell, under an `if`: every step that can fail returns its status explicitly.
kit_source() {
    KIT_LINKS=()
    if uv pip compile --quiet --no-deps --no-sources --python "$PYTHON" -o /dev/null - \
        <<<"$KIT==$1" 2>/dev/null; then
        KIT_FROM="PyPI"
    elif [ "$1" = "$(helper --kit-version)" ]; then
        if [ ! -d "$WORK/kit" ]; then
            uv build --quiet --package "$KIT" --no-sources --wheel --out-dir "$WORK/kit" || return 1
        fi
        KIT_LINKS=(--find-links "$WORK/kit")
        KIT_FROM="a wheel built from the workspace (not on PyPI yet)"
    else
        echo "$KIT $1 is neither on PyPI nor the workspace's version: raise the floor" >&2
        return 1
    fi
}

# attempt NAME TARGET [KIT_FLOOR] -- COMPILE_ARGS...: resolve at lowest-direct into a fresh venv,
# check the kit floor if one is given, and run pytest TARGET there. Run it with run_checked.
attempt() {
    local name=$1 target=$2 floor=$3 venv=$WORK/$1
    shift 4
    say "[$name] resolving with --resolution lowest-direct: $*"
    uv pip compile --quiet --python "$PYTHON" --resolution lowest-direct \
        --no-header --no-annotate "${KIT_LINKS[@]}" "$@" -o "$venv.txt"
    { grep -E "$SHOWN" "$venv.txt" || true; } | paste -sd' ' | fold -s -w 100 | sed 's/^/   /'
    uv venv --quiet --python "$PYTHON" "$venv"
    uv pip sync --quiet --python "$venv/bin/python" "${KIT_LINKS[@]}" - <"$venv.txt"
    uv pip check --quiet --python "$venv/bin/python"
    if [ -n "$floor" ]; then
        (cd "$WORK" && "$venv/bin/python" -I "$ROOT/scripts/ci/kit_installed.py" "$floor" "$ROOT")
    fi
    say "[$name] pytest ${target:-(the whole suite)}"
    # shellcheck disable=SC2086  # an empty TARGET means no argument
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
    [[ $ONLY == *" $package "* ]] || continue
    helper "$package" >"$WORK/$package.in"
    sed 's/^/   /' "$WORK/$package.in"
    began=$SECONDS floor="" detail="" KIT_LINKS=()
    if [ "$package" != "$KIT" ]; then
        floor=$(helper --kit-floor "$package")
        if ! kit_source "$floor"; then
            note "$package" 1 0 "no $KIT $floor to test against"
            continue
        fi
        detail="$KIT $floor from $KIT_FROM"
        say "[$package] $detail"
    fi
    # Another adapter its test group names (mnem-agent-framework's tests use mnem-autogen) is
    # not on PyPI before its first release: a wheel of it built from the workspace stands in.
    for member in $(helper --test-members "$package"); do
        if [ ! -d "$WORK/members/$member" ]; then
            uv build --quiet --package "$member" --no-sources --wheel --out-dir "$WORK/members/$member"
        fi
        KIT_LINKS+=(--find-links "$WORK/members/$member")
        say "[$package] its test group's $member: a wheel built from the workspace"
    done
    run_checked attempt "$package" "packages/$package" "$floor" -- --no-sources \
        --group "packages/$package/pyproject.toml:test" - <"$WORK/$package.in"
    note "$package" "$status" $((SECONDS - began)) "$detail"
done

# Last, so the suite's own summary closes the output.
if [[ $ONLY == *" workspace "* ]]; then
    began=$SECONDS KIT_LINKS=()
    run_checked attempt workspace "" "" -- --group pyproject.toml:dev
    note workspace "$status" $((SECONDS - began))
fi

say "lowest-direct summary ($("$PYTHON" --version))"
printf '   %s\n' "${summary[@]}"
say "lowest.sh finished in $((SECONDS - started))s"
exit "$failed"
