#!/usr/bin/env bash
# Test this checkout's adapter kit against every adapter's latest release, before the kit is
# released: a kit that breaks an adapter users already have fails here (docs/adr/0012).
#
# An adapter's latest release is its highest final tag `<adapter>-vX.Y.Z` (RELEASING.md). For
# each, in a fresh environment outside the workspace: that release from PyPI, the kit wheel built
# from this checkout, the release's `test` dependency group; then the release's own tests, taken
# from its tag (its src/ removed, so only the installed release can be imported).
#   * an adapter with no release tag has nothing users could break: skipped, and said so;
#   * a release whose kit range excludes this kit (a new kit major) is reported, not tested.
#
#   bash scripts/ci/kit_compat.sh        needs the tags (a full clone, or fetch-depth: 0)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/ci/lib.sh

export UV_PYTHON_DOWNLOADS=never
export PYTHONUNBUFFERED=1
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"
KIT=mnem-adapter-kit
ADAPTERS=(mnem-autogen mnem-langgraph mnem-mcp mnem-openai-agents mnem-agent-framework mnem-crewai)

# A shallow clone may lack the release tags: fetch them, or say loudly that they may be missing.
if [ "$(git rev-parse --is-shallow-repository)" = true ] && ! git fetch --quiet --tags origin; then
    say "WARNING: a shallow clone whose tags cannot be fetched: releases may be missing below"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-kit-compat.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
started=$SECONDS
summary=()
failed=0

# admits PYPROJECT VERSION: does the project's dependency on the kit admit VERSION?
admits() {
    uv run --quiet --no-project --isolated --python "$PYTHON" --with packaging \
        --with 'tomli; python_version < "3.11"' python - "$@" <<'PY'
import sys
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

try:
    import tomllib
except ModuleNotFoundError:
    import tomli as tomllib

with open(sys.argv[1], "rb") as file:
    dependencies = tomllib.load(file)["project"]["dependencies"]
requirements = [Requirement(d) for d in dependencies]
kit = next(r for r in requirements if canonicalize_name(r.name) == "mnem-adapter-kit")
print(kit.specifier)
sys.exit(0 if kit.specifier.contains(sys.argv[2], prereleases=True) else 1)
PY
}

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

kit_version=$(uv run --quiet --no-project --isolated --python "$PYTHON" --with packaging \
    --with 'tomli; python_version < "3.11"' python scripts/ci/lowest_requirements.py --kit-version)
KIT_WHEEL=""
for adapter in "${ADAPTERS[@]}"; do
    tag=$(git tag --list "$adapter-v*" --sort=-v:refname | grep -E -- '-v[0-9]+\.[0-9]+\.[0-9]+$' | head -n 1 || true)
    if [ -z "$tag" ]; then
        say "[$adapter] no release yet (no tag $adapter-vX.Y.Z): nothing released to test the kit against"
        summary+=("$adapter: skipped, not released yet")
        continue
    fi
    git show "$tag:packages/$adapter/pyproject.toml" >"$WORK/$adapter.pyproject.toml"
    if ! range=$(admits "$WORK/$adapter.pyproject.toml" "$kit_version"); then
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
    if [ "$status" -eq 0 ]; then
        summary+=("$adapter: ${tag##*-v} passed with kit $kit_version ($((SECONDS - began))s)")
    else
        summary+=("$adapter: ${tag##*-v} FAILED with kit $kit_version ($((SECONDS - began))s)")
        failed=1
    fi
done

say "kit $kit_version against the adapters' latest releases"
printf '   %s\n' "${summary[@]}"
say "kit_compat.sh finished in $((SECONDS - started))s"
exit "$failed"
