#!/usr/bin/env bash
# After the upload: install a release the way its README says, from PyPI alone, and run the
# README there. Waits until PyPI serves the version, requires the wheel it serves to be the one
# the build job made (DIST_DIR), installs the README's install line with the package pinned to
# VERSION (scripts/ci/readme_install.py) in a fresh environment outside the checkout, imports
# every module and runs the README's Python blocks (scripts/ci/readme_blocks.py), its quick
# start as `python FILE`. The release workflow's `published` job runs it; by hand:
#
#   bash scripts/release/check_published.sh PACKAGE VERSION [DIST_DIR]
#
# MNEM_PUBLISHED_WAIT (seconds, default 600) bounds the wait for PyPI's index.
set -euo pipefail
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: $0 PACKAGE VERSION [DIST_DIR]" >&2; exit 2; }
PACKAGE=$1
VERSION=$2
DIST=${3:+$(cd "$3" && pwd)}
cd "$(dirname "$0")/../.."
ROOT=$PWD
source scripts/ci/lib.sh

export UV_PYTHON_DOWNLOADS=never
export PYTHONUNBUFFERED=1
# mnem-crewai's README runs CrewAI: no telemetry or tracing from a release job.
export CREWAI_DISABLE_TELEMETRY=true OTEL_SDK_DISABLED=true CREWAI_TRACING_ENABLED=false
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"
INDEX=https://pypi.org/simple
unset PIP_FIND_LINKS PIP_EXTRA_INDEX_URL PIP_INDEX_URL UV_FIND_LINKS UV_EXTRA_INDEX_URL UV_INDEX_URL
WAIT=${MNEM_PUBLISHED_WAIT:-600}

line=$(uv run --no-project --isolated --with packaging \
    python scripts/ci/readme_install.py "$PACKAGE" "$VERSION")  # fails while still unreleased
mapfile -t wanted <<<"$line"
markdown_docs=$(locked pytest-markdown-docs)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-published.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/pypi" "$WORK/readme"
cp scripts/ci/check_installed.py scripts/ci/readme_blocks.py "$WORK"/
cp "packages/$PACKAGE/README.md" "$WORK/readme/"
cd "$WORK"

# uv has no `download`: a pip of its own, outside the environment under test, fetches the wheel.
uv venv --quiet --python "$PYTHON" fetch
uv pip install --quiet --python fetch/bin/python pip
say "waiting for $PACKAGE $VERSION on $INDEX (at most ${WAIT}s)"
started=$SECONDS
until fetch/bin/python -m pip download --quiet --no-deps --only-binary :all: \
    --index-url "$INDEX" --dest pypi "$PACKAGE==$VERSION" 2>download.err; do
    if ((SECONDS - started > WAIT)); then
        echo "PyPI did not serve $PACKAGE $VERSION within ${WAIT}s:" >&2
        cat download.err >&2
        exit 1
    fi
    sleep 20
done
served=(pypi/*.whl)
say "PyPI serves $(basename "${served[0]}")"
if [ -n "$DIST" ]; then
    cmp "${served[0]}" "$DIST/$(basename "${served[0]}")" ||
        { echo "the wheel on PyPI is not the one the build job made" >&2; exit 1; }
    say "byte for byte the wheel the build job made"
fi

say "the README's install line, pinned: ${wanted[*]} (from $INDEX only)"
uv venv --quiet --python "$PYTHON" venv
uv pip install --quiet --python venv/bin/python --index-url "$INDEX" "${wanted[@]}" "$markdown_docs"
uv pip check --python venv/bin/python
venv/bin/python -I check_installed.py pypi "$ROOT" "$PACKAGE"
say "packages/$PACKAGE/README.md: its Python blocks, from PyPI"
(cd readme && PATH="$WORK/venv/bin:$PATH" PYTHONPATH="$WORK" ../venv/bin/python -m pytest -v \
    -p no:cacheprovider -p readme_blocks --markdown-docs README.md)
say "$PACKAGE $VERSION installs from PyPI as its README says, and its README runs"
