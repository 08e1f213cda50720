#!/usr/bin/env bash
# This checkout's kit against each adapter's latest release (its highest tag <adapter>-vX.Y.Z,
# so run it with the tags), before the kit is released (docs/adr/0012): the release from PyPI and
# the kit wheel built here, then the release's tests from its tag, its src/ removed. Unreleased
# adapters are skipped, and releases whose range excludes the kit (a new major) reported, saying so.
source "$(dirname "$0")/lib.sh"
KIT=mnem-adapter-kit
ADAPTERS=(mnem-autogen mnem-langgraph mnem-mcp mnem-openai-agents mnem-agent-framework mnem-crewai)
# A shallow clone lacks the tags that name the releases: fetch them, or fail.
[ "$(git rev-parse --is-shallow-repository)" = false ] || git fetch --quiet --tags origin
scratch kit-compat
kit_version=$(uv version --package "$KIT" --short --frozen)

# check ADAPTER TAG: the release's tests against this checkout's kit.
check() {
    local tree=$WORK/packages/$1
    [ -d "$WORK/kit" ] || uv build --quiet --package "$KIT" --no-sources --wheel --out-dir "$WORK/kit"
    git archive "$2" "packages/$1" | tar -x -C "$WORK"
    rm -rf "$tree/src"
    fresh "$WORK/venv-$1" "$1==${2##*-v}" "$KIT[testing] @ file://$(echo "$WORK"/kit/*.whl)" \
        --group "$tree/pyproject.toml:test"
    say "[$1] pytest: the tests of $2, $1 ${2##*-v} as released, $KIT $kit_version from this checkout"
    (cd "$tree" && "$WORK/venv-$1/bin/python" -m pytest -q -p no:cacheprovider)
}

for adapter in "${ADAPTERS[@]}"; do
    tag=$(git tag --list "$adapter-v*" --sort=-v:refname | grep -E -- '-v[0-9]+\.[0-9]+\.[0-9]+$' | head -n 1 || true)
    if [ -z "$tag" ]; then
        SUMMARY+=("$adapter: skipped, no release yet (no tag $adapter-vX.Y.Z)")
        continue
    fi
    git show "$tag:packages/$adapter/pyproject.toml" >"$WORK/$adapter.pyproject.toml"
    if range=$(release admits "$WORK/$adapter.pyproject.toml" "$kit_version"); then
        checked "$adapter ${tag##*-v} with kit $kit_version" check "$adapter" "$tag"
    else
        SUMMARY+=("$adapter: ${tag##*-v} requires $KIT$range, not $kit_version (a new major): not tested")
    fi
done
summary "kit $kit_version against the adapters' latest releases"
