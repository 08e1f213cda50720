#!/usr/bin/env bash
# This checkout's kit against each adapter's latest release (its highest tag <adapter>-vX.Y.Z,
# so run it with the tags), before the kit is released (docs/adr/0012): the release from PyPI and
# the kit wheel built here, then the release's tests from its tag, its src/ removed. Unreleased
# adapters are skipped, and releases whose range excludes the kit (a new major) reported, saying so.
source "$(dirname "$0")/lib.sh"
KIT=mnem-adapter-kit
ADAPTERS=(mnem-autogen mnem-langgraph mnem-mcp mnem-openai-agents mnem-agent-framework mnem-crewai)
if [ "$(git rev-parse --is-shallow-repository)" = true ] && ! git fetch --quiet --tags origin; then
    say "WARNING: a shallow clone whose tags cannot be fetched: releases may be missing below"
fi
scratch kit-compat
started=$SECONDS summary=() failed=0 KIT_WHEEL=""

# check ADAPTER TAG: the release's tests against this checkout's kit.
check() {
    local adapter=$1 tag=$2 version=${2##*-v} venv=$WORK/venv-$1 tree=$WORK/$1
    mkdir -p "$tree"
    git archive "$tag" "packages/$adapter" | tar -x -C "$tree" --strip-components=2
    rm -rf "$tree/src"
    uv venv --quiet --python "$PYTHON" "$venv"
    uv pip install --quiet --python "$venv/bin/python" "$adapter==$version" \
        "${KIT}[testing] @ file://$KIT_WHEEL" --group "$tree/pyproject.toml:test"
    uv pip check --quiet --python "$venv/bin/python"
    say "[$adapter] pytest: the tests of $tag, $adapter $version as released, $KIT $kit_version from this checkout"
    (cd "$tree" && "$venv/bin/python" -m pytest -q -p no:cacheprovider)
}

kit_version=$(release kit-version)
for adapter in "${ADAPTERS[@]}"; do
    tag=$(git tag --list "$adapter-v*" --sort=-v:refname | grep -E -- '-v[0-9]+\.[0-9]+\.[0-9]+$' | head -n 1 || true)
    if [ -z "$tag" ]; then
        say "[$adapter] no release yet (no tag $adapter-vX.Y.Z): nothing released to test the kit against"
        summary+=("$adapter: skipped, not released yet")
        continue
    fi
    git show "$tag:packages/$adapter/pyproject.toml" >"$WORK/$adapter.pyproject.toml"
    if ! range=$(release admits "$WORK/$adapter.pyproject.toml" "$kit_version"); then
        say "[$adapter] $tag requires $KIT$range, which excludes $kit_version: a new kit major"
        summary+=("$adapter: ${tag##*-v} excludes kit $kit_version (range $range): not tested")
        continue
    fi
    if [ -z "$KIT_WHEEL" ]; then
        uv build --quiet --package "$KIT" --no-sources --wheel --out-dir "$WORK/kit"
        KIT_WHEEL=$(echo "$WORK"/kit/*.whl)
    fi
    began=$SECONDS
    run_checked check "$adapter" "$tag"
    result=$([ "$status" -eq 0 ] && echo passed || echo FAILED)
    summary+=("$adapter: ${tag##*-v} $result with kit $kit_version ($((SECONDS - began))s)")
    [ "$status" -eq 0 ] || failed=1
done
say "kit $kit_version against the adapters' latest releases"
printf '   %s\n' "${summary[@]}"
say "kit_compat.sh finished in $((SECONDS - started))s"
exit "$failed"
