#!/usr/bin/env bash
# Install a release as its README says, fresh and outside the checkout; import every module and
# run the README's blocks there. `DIST_DIR PACKAGE`: the built wheel, dependencies from PyPI and
# DIST_DIR. `--published PACKAGE VERSION [DIST_DIR]`: once PyPI serves DIST_DIR's very wheel (at
# most MNEM_PUBLISHED_WAIT seconds, 600), the README's install line pinned to VERSION, PyPI alone.
source "$(dirname "$0")/../ci/lib.sh"
# mnem-crewai's README runs CrewAI: no telemetry or tracing from a release job.
export CREWAI_DISABLE_TELEMETRY=true OTEL_SDK_DISABLED=true CREWAI_TRACING_ENABLED=false
usage="usage: $0 DIST_DIR PACKAGE | --published PACKAGE VERSION [DIST_DIR]"
if [ "${1:-}" = --published ]; then
    [ $# -ge 3 ] && [ $# -le 4 ] || { echo "$usage" >&2; exit 2; }
    PACKAGE=$2 VERSION=$3 BUILT=${4:+$(here "$4")} WAIT=${MNEM_PUBLISHED_WAIT:-600}
    INDEX=https://pypi.org/simple
    unset PIP_FIND_LINKS PIP_EXTRA_INDEX_URL PIP_INDEX_URL UV_FIND_LINKS UV_EXTRA_INDEX_URL UV_INDEX_URL
    line=$(release install-line "$PACKAGE" "$VERSION")  # fails while still unreleased
    mapfile -t wanted <<<"$line"
    scratch release-published
    DIST=$WORK/pypi from=(--index-url "$INDEX") what="PyPI" && mkdir "$WORK/pypi"
    # uv has no `download`: a pip of its own, outside the environment under test, fetches the wheel.
    uv venv --quiet --python "$PYTHON" "$WORK/fetch"
    uv pip install --quiet --python "$WORK/fetch/bin/python" pip
    say "waiting for $PACKAGE $VERSION on $INDEX (at most ${WAIT}s)"
    started=$SECONDS
    until "$WORK/fetch/bin/python" -m pip download --quiet --no-deps --only-binary :all: \
        --index-url "$INDEX" --dest "$DIST" "$PACKAGE==$VERSION" 2>"$WORK/download.err"; do
        ((SECONDS - started <= WAIT)) ||
            { echo "PyPI did not serve $PACKAGE $VERSION within ${WAIT}s:" >&2; cat "$WORK/download.err" >&2; exit 1; }
        sleep 20
    done
    served=("$DIST"/*.whl)
    say "PyPI serves $(basename "${served[0]}")"
    if [ -n "$BUILT" ]; then
        cmp "${served[0]}" "$BUILT/$(basename "${served[0]}")" ||
            { echo "the wheel on PyPI is not the one the build job made" >&2; exit 1; }
        say "byte for byte the wheel the build job made"
    fi
else
    [ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
    DIST=$(here "$1") PACKAGE=$2 && from=(--find-links "$DIST") what="its wheel"
    shopt -s nullglob
    wheels=("$DIST/${PACKAGE//-/_}"-*.whl)
    [ ${#wheels[@]} -eq 1 ] || { echo "expected one $PACKAGE wheel in $DIST, found ${#wheels[@]}" >&2; exit 1; }
    case $PACKAGE in  # as the package's README installs it
        mnem-adapter-kit) wanted=("${PACKAGE}[testing] @ file://${wheels[0]}") ;;
        mnem-autogen) wanted=("${PACKAGE}[agentchat] @ file://${wheels[0]}") ;;
        mnem-langgraph) wanted=("${PACKAGE}[index] @ file://${wheels[0]}" langgraph) ;;
        *) wanted=("$PACKAGE @ file://${wheels[0]}") ;;
    esac
    scratch release-smoke
fi
markdown_docs=$(locked pytest-markdown-docs)
mkdir "$WORK/readme"
cp scripts/ci/check_installed.py scripts/ci/readme_blocks.py "$WORK"/
cp "packages/$PACKAGE/README.md" "$WORK/readme/"
cd "$WORK"

say "fresh environment ($("$PYTHON" --version)): ${wanted[*]}, from $what"
uv venv --quiet --python "$PYTHON" venv
uv pip install --quiet --python venv/bin/python "${from[@]}" "${wanted[@]}" "$markdown_docs"
uv pip check --python venv/bin/python
venv/bin/python -I check_installed.py "$DIST" "$ROOT" "$PACKAGE"
say "packages/$PACKAGE/README.md: its Python blocks, from $what"
(cd readme && PATH="$WORK/venv/bin:$PATH" PYTHONPATH="$WORK" ../venv/bin/python -m pytest -v \
    -p no:cacheprovider -p readme_blocks --markdown-docs README.md)
say "$PACKAGE${VERSION:+ $VERSION} installs as its README says, from $what, and its README runs"
