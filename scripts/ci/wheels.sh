#!/usr/bin/env bash
# Build every publishable package exactly as a release does, check the artifacts, then install
# the wheels (plus PyPI, nothing editable) in a fresh environment outside the workspace and run
# the worked example and the smoke scripts there; last, each package's tests from its unpacked
# sdist (scripts/ci/sdist_tests.sh).
#
#   bash scripts/ci/wheels.sh            MNEM_CI_PYTHON=python3.12 picks another interpreter
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

export UV_PYTHON_DOWNLOADS=never
export PYTHONUNBUFFERED=1
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"
PACKAGES=(mnem-adapter-kit mnem-autogen mnem-langgraph mnem-mcp)
source scripts/ci/lib.sh

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-wheels.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
DIST=$WORK/dist
VENV=$WORK/venv
RUN=$WORK/run
mkdir -p "$RUN"

started=$SECONDS

say "building ${PACKAGES[*]} with --no-sources into $DIST"
for package in "${PACKAGES[@]}"; do
    uv build --quiet --package "$package" --no-sources --out-dir "$DIST"
done

say "twine check --strict (every wheel and sdist)"
uvx --python "$PYTHON" --from 'twine>=6.1' twine check --strict "$DIST"/*.whl "$DIST"/*.tar.gz

say "wheel contents and metadata"
expect=()
for package in "${PACKAGES[@]}"; do expect+=(--expect "$package"); done
# On GitHub Actions, the metadata must name the repository the build runs in.
[ -z "${GITHUB_REPOSITORY:-}" ] || expect+=(--repository "https://github.com/$GITHUB_REPOSITORY")
uv run --quiet --no-project --isolated --python "$PYTHON" \
    --with packaging --with trove-classifiers \
    python scripts/ci/check_wheel_contents.py "$DIST" "${expect[@]}"

# Pin each built distribution to its built version (with the extras whose modules are checked)
# so a same-named release on PyPI cannot win;
# check_installed.py then proves the installed files are the wheel's.
mapfile -t requirements < <(built_pins "$DIST" | sed -e 's/^mnem-adapter-kit==/mnem-adapter-kit[testing]==/' -e 's/^mnem-langgraph==/mnem-langgraph[index]==/')

cp scripts/ci/check_installed.py examples/autogen_memory.py "$RUN"/
cp scripts/smoke/*.py "$RUN"/
cd "$WORK"  # from here on nothing can import from the repository

say "fresh environment $VENV ($("$PYTHON" --version)), wheels from $DIST plus PyPI"
uv venv --quiet --python "$PYTHON" "$VENV"
uv pip install --quiet --python "$VENV/bin/python" --find-links "$DIST" \
    "${requirements[@]}" autogen-ext autogen-agentchat
uv pip check --python "$VENV/bin/python"

say "importing every module of every built wheel"
"$VENV/bin/python" -I "$RUN/check_installed.py" "$DIST" "$ROOT"

say "worked example: examples/autogen_memory.py"
"$VENV/bin/python" -I "$RUN/autogen_memory.py" | sed 's/^/   | /'

for smoke in "$RUN"/*_smoke.py; do
    say "smoke: scripts/smoke/$(basename "$smoke")"
    "$VENV/bin/python" -I "$smoke" | sed 's/^/   | /'
done

cd "$ROOT"
say "every package README, verbatim, after its own install lines (scripts/ci/readme_snippets.py)"
MNEM_CI_PYTHON=$PYTHON uv run --quiet --no-project --isolated --python "$PYTHON" \
    python scripts/ci/readme_snippets.py "$DIST" packages/*/README.md

bash scripts/ci/sdist_tests.sh "$DIST"

say "built distributions"
for artifact in "$DIST"/*.whl "$DIST"/*.tar.gz; do
    printf '   %-48s %8s bytes\n' "$(basename "$artifact")" "$(wc -c <"$artifact" | tr -d ' ')"
done
say "wheels.sh passed in $((SECONDS - started))s"
