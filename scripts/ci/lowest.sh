#!/usr/bin/env bash
# The tests at the lowest versions declared (`--resolution lowest-direct`, throwaway venvs): each
# package alone with its `test` group, so a floor another raises cannot hide a false one, an
# adapter with the kit wheel at exactly its floor (PyPI's, or built while the workspace kit is that
# version); then `workspace`, the whole suite. MNEM_LOWEST_ONLY="mnem-mcp workspace" runs only those.
source "$(dirname "$0")/lib.sh"
KIT=mnem-adapter-kit
PACKAGES=("$KIT" mnem-autogen mnem-langgraph mnem-mcp mnem-openai-agents mnem-agent-framework mnem-crewai)
ONLY=" ${MNEM_LOWEST_ONLY:-${PACKAGES[*]} workspace} "
scratch lowest
started=$SECONDS summary=() failed=0
# The pins worth showing (display only): the workspace's direct dependencies.
SHOWN='^(mnem-agents|mnem-adapter-kit|autogen-(core|agentchat|ext)|pydantic|typing-extensions|langgraph(-checkpoint)?|mcp|openai-agents|agent-framework-core|pytest(-asyncio)?|hypothesis)=='

# kit_source FLOOR: LINKS and KIT_FROM for that kit; in this shell, under an `if`, so each step returns.
kit_source() {
    if uv pip compile --quiet --no-deps --no-sources --python "$PYTHON" -o /dev/null - <<<"$KIT==$1" 2>/dev/null; then
        KIT_FROM=PyPI
    elif [ "$1" = "$(release kit-version)" ]; then
        [ -d "$WORK/kit" ] || uv build --quiet --package "$KIT" --no-sources --wheel --out-dir "$WORK/kit" || return 1
        LINKS+=(--find-links "$WORK/kit") KIT_FROM="a wheel built from the workspace (not on PyPI yet)"
    else
        echo "$KIT $1 is neither on PyPI nor the workspace's version: raise the floor" >&2
        return 1
    fi
}

# attempt NAME TARGET FLOOR COMPILE_ARG...: resolve, install, check the kit is FLOOR, pytest TARGET.
attempt() {
    local name=$1 target=$2 floor=$3 venv=$WORK/$1
    shift 3
    say "[$name] resolving with --resolution lowest-direct: $*"
    uv pip compile --quiet --python "$PYTHON" --resolution lowest-direct --no-header --no-annotate \
        "${LINKS[@]}" "$@" -o "$venv.txt"
    { grep -E "$SHOWN" "$venv.txt" || true; } | paste -sd' ' | fold -s -w 100 | sed 's/^/   /'
    uv venv --quiet --python "$PYTHON" "$venv"
    uv pip sync --quiet --python "$venv/bin/python" "${LINKS[@]}" - <"$venv.txt"
    uv pip check --quiet --python "$venv/bin/python"
    [ -z "$floor" ] || "$venv/bin/python" -I "$MNEM_CI_DIR/check_installed.py" --kit "$floor" "$ROOT"
    say "[$name] pytest ${target:-(the whole suite)}"
    # shellcheck disable=SC2086  # an empty TARGET means no argument
    "$venv/bin/python" -m pytest -q -p no:cacheprovider $target
}

note() {  # note LABEL SECONDS [DETAIL]: the outcome in `status`, into the summary
    summary+=("$1: $([ "$status" -eq 0 ] && echo passed || echo FAILED at the pins above) ($2s)${3:+; $3}")
    [ "$status" -eq 0 ] || failed=1
}

for package in "${PACKAGES[@]}"; do
    [[ $ONLY == *" $package "* ]] || continue
    release requirements "$package" >"$WORK/$package.in"
    sed 's/^/   /' "$WORK/$package.in"
    began=$SECONDS floor="" detail="" LINKS=()
    if [ "$package" != "$KIT" ]; then
        floor=$(sed -n "s/^$KIT\[testing\]==//p" "$WORK/$package.in")
        if ! kit_source "$floor"; then
            status=1; note "$package" 0 "no $KIT $floor to test against"; continue
        fi
        detail="$KIT $floor from $KIT_FROM"
        say "[$package] $detail"
    fi
    # A member its test group names (mnem-autogen, for mnem-agent-framework): a wheel built here.
    for member in $(release test-members "$package"); do
        [ -d "$WORK/members/$member" ] ||
            uv build --quiet --package "$member" --no-sources --wheel --out-dir "$WORK/members/$member"
        LINKS+=(--find-links "$WORK/members/$member")
        say "[$package] its test group's $member: a wheel built from the workspace"
    done
    run_checked attempt "$package" "packages/$package" "$floor" --no-sources \
        --group "packages/$package/pyproject.toml:test" - <"$WORK/$package.in"
    note "$package" $((SECONDS - began)) "$detail"
done
if [[ $ONLY == *" workspace "* ]]; then
    began=$SECONDS LINKS=()
    run_checked attempt workspace "" "" --group pyproject.toml:dev
    note workspace $((SECONDS - began))
fi
say "lowest-direct summary ($("$PYTHON" --version))"
printf '   %s\n' "${summary[@]}"
say "lowest.sh finished in $((SECONDS - started))s"
exit "$failed"
