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
LINKS=()
# The pins worth showing (display only): the workspace's direct dependencies.
SHOWN='^(mnem-agents|mnem-adapter-kit|autogen-(core|agentchat|ext)|pydantic|typing-extensions|langgraph(-checkpoint)?|mcp|openai-agents|agent-framework-core|pytest(-asyncio)?|hypothesis)=='

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

# package NAME: NAME with its test group; an adapter with the kit at its floor, from PyPI, else a
# wheel built here while the workspace kit is that version; a workspace member its test group
# names (mnem-autogen, for mnem-agent-framework), a wheel built here.
package() {
    local floor member
    release requirements "$1" >"$WORK/$1.in"
    floor=$(sed -n "s/^$KIT\[testing\]==//p" "$WORK/$1.in")
    if [ -n "$floor" ] && ! uv pip compile --quiet --no-deps --no-sources --python "$PYTHON" \
        -o /dev/null - <<<"$KIT==$floor" 2>/dev/null; then
        [ "$floor" = "$(uv version --package "$KIT" --short --frozen)" ] ||
            { echo "$KIT $floor is neither on PyPI nor the workspace's version: raise the floor" >&2; return 1; }
        [ -d "$WORK/kit" ] || uv build --quiet --package "$KIT" --no-sources --wheel --out-dir "$WORK/kit"
        LINKS+=(--find-links "$WORK/kit")
        say "[$1] $KIT $floor, not on PyPI yet: a wheel built from the workspace"
    fi
    for member in $(release test-members "$1"); do
        [ -d "$WORK/members/$member" ] ||
            uv build --quiet --package "$member" --no-sources --wheel --out-dir "$WORK/members/$member"
        LINKS+=(--find-links "$WORK/members/$member")
        say "[$1] its test group's $member: a wheel built from the workspace"
    done
    attempt "$1" "packages/$1" "$floor" --no-sources --group "packages/$1/pyproject.toml:test" - \
        <"$WORK/$1.in"
}

for name in "${PACKAGES[@]}"; do
    [[ $ONLY != *" $name "* ]] || checked "$name" package "$name"
done
[[ $ONLY != *" workspace "* ]] || checked workspace attempt workspace "" "" --group pyproject.toml:dev
summary "lowest-direct summary ($("$PYTHON" --version)): a failure at the pins above"
