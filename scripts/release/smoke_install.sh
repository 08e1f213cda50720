#!/usr/bin/env bash
# Install a release as its README says, fresh and outside the checkout; import every module and
# run the README's blocks there. `DIST_DIR PACKAGE`: the built wheel, dependencies from PyPI and
# DIST_DIR. `--published PACKAGE VERSION [DIST_DIR]`: once PyPI serves DIST_DIR's very wheel (at
# most MNEM_PUBLISHED_WAIT seconds, 600), the README's install line pinned to VERSION, PyPI alone.
set -euo pipefail
if [ "$1" = --published ]; then
    PACKAGE=$2 VERSION=$3 BUILT=${4:+$(realpath "$4")}
else
    DIST=$(realpath "$1") PACKAGE=$2
fi
source "$(dirname "$0")/../ci/lib.sh"
# mnem-crewai's README runs CrewAI: no telemetry or tracing from a release job.
export CREWAI_DISABLE_TELEMETRY=true OTEL_SDK_DISABLED=true CREWAI_TRACING_ENABLED=false
scratch smoke
VENV=$WORK/venv
if [ -n "${VERSION:-}" ]; then
    INDEX=https://pypi.org/simple WAIT=${MNEM_PUBLISHED_WAIT:-600} DIST=$WORK/pypi
    unset PIP_FIND_LINKS PIP_EXTRA_INDEX_URL PIP_INDEX_URL UV_FIND_LINKS UV_EXTRA_INDEX_URL UV_INDEX_URL
    line=$(release install-line "$PACKAGE" "$VERSION")  # fails while still unreleased
    mapfile -t wanted <<<"$line"
    from=(--index-url "$INDEX") what="PyPI"
    say "waiting for $PACKAGE $VERSION on $INDEX (at most ${WAIT}s)"
    # uv has no `download`: pip (uvx, outside the environment under test) fetches the wheel.
    until uvx --python "$PYTHON" pip download --quiet --no-deps --only-binary :all: \
        --index-url "$INDEX" --dest "$DIST" "$PACKAGE==$VERSION" 2>"$WORK/download.err"; do
        ((SECONDS <= WAIT)) ||
            { echo "PyPI did not serve $PACKAGE $VERSION within ${WAIT}s:" >&2; cat "$WORK/download.err" >&2; exit 1; }
        sleep 20
    done
    served=$(echo "$DIST"/*.whl)
    [ -z "$BUILT" ] || cmp "$served" "$BUILT/$(basename "$served")" ||
        { echo "the wheel on PyPI is not the one the build job made" >&2; exit 1; }
    say "PyPI serves $(basename "$served")${BUILT:+, byte for byte the wheel the build job made}"
else
    wheel=$(echo "$DIST/${PACKAGE//-/_}"-*.whl)  # one: `release.py tag --dist` has checked
    from=(--find-links "$DIST") what="its wheel"
    case $PACKAGE in  # as the package's README installs it
        mnem-adapter-kit) wanted=("$PACKAGE[testing] @ file://$wheel") ;;
        mnem-autogen) wanted=("$PACKAGE[agentchat] @ file://$wheel") ;;
        mnem-langgraph) wanted=("$PACKAGE[index] @ file://$wheel" langgraph) ;;
        *) wanted=("$PACKAGE @ file://$wheel") ;;
    esac
fi
stage "$PACKAGE"
cd "$WORK"

say "fresh environment ($("$PYTHON" --version)): ${wanted[*]}, from $what"
fresh "$VENV" "${from[@]}" "${wanted[@]}" "$MARKDOWN_DOCS"
"$VENV/bin/python" -I "$RUN/check_installed.py" "$DIST" "$ROOT" "$PACKAGE"
say "packages/$PACKAGE/README.md: its Python blocks, from $what"
readmes "$VENV/bin/python"
say "$PACKAGE${VERSION:+ $VERSION} installs as its README says, from $what, and its README runs"
