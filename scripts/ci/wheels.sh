#!/usr/bin/env bash
# Build every publishable package exactly as a release does and check the artifacts; then, in
# a fresh environment outside the workspace holding the wheels plus PyPI (nothing editable),
# import every module, run the worked example and every README's Python blocks
# (scripts/ci/readme_blocks.py: each README's quick start saved to a file and run with
# `python`, with no API key in the environment); last, each package's tests from its unpacked
# sdist.
#
#   bash scripts/ci/wheels.sh            MNEM_CI_PYTHON=python3.12 picks another interpreter
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source scripts/ci/lib.sh

export UV_PYTHON_DOWNLOADS=never
export PYTHONUNBUFFERED=1
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"
PACKAGES=(mnem-adapter-kit mnem-autogen mnem-langgraph mnem-mcp mnem-openai-agents mnem-agent-framework)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-wheels.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
DIST=$WORK/dist
VENV=$WORK/venv
RUN=$WORK/run
mkdir -p "$RUN/readmes"
started=$SECONDS

say "building ${PACKAGES[*]} with --no-sources into $DIST"
for package in "${PACKAGES[@]}"; do
    uv build --quiet --package "$package" --no-sources --out-dir "$DIST"
done

say "twine check --strict (every wheel and sdist)"
uvx --python "$PYTHON" --from 'twine>=6.1' twine check --strict "$DIST"/*.whl "$DIST"/*.tar.gz

say "check-wheel-contents: each wheel holds exactly its package's source tree"
for package in "${PACKAGES[@]}"; do
    module=${package//-/_}
    uvx --python "$PYTHON" --from 'check-wheel-contents>=0.6.3' check-wheel-contents \
        --package "packages/$package/src/$module" "$DIST/$module"-*.whl
done
# On GitHub Actions, the metadata must name the repository the build runs in.
[ -z "${GITHUB_REPOSITORY:-}" ] || check_source "$DIST" "https://github.com/$GITHUB_REPOSITORY"

# The wheels pinned to their built versions, with the extras the READMEs install, so a
# same-named release on PyPI cannot win; check_installed.py then proves the files are the wheels'.
# autogen-ext[openai] is what the AutoGen README's Studio block needs (Studio's install brings
# it), run here with --snippet-env autogen-openai: a package's smoke install has no such client.
mapfile -t requirements < <(built_pins "$DIST" | sed -e 's/^mnem-adapter-kit==/mnem-adapter-kit[testing]==/' \
    -e 's/^mnem-autogen==/mnem-autogen[agentchat]==/' -e 's/^mnem-langgraph==/mnem-langgraph[index]==/')
markdown_docs=$(locked pytest-markdown-docs)
cp scripts/ci/check_installed.py scripts/ci/readme_blocks.py examples/autogen_memory.py \
    examples/openai_agents_session.py examples/agent_framework_memory.py "$RUN"/
for readme in packages/*/README.md; do
    # mnem-crewai is outside the workspace (crewai's pins): its README runs from its own
    # environment, in .ci/run's mnem-crewai step.
    [ "$readme" != packages/mnem-crewai/README.md ] || continue
    mkdir -p "$RUN/readmes/$(dirname "$readme")" && cp "$readme" "$RUN/readmes/$readme"
done
cd "$WORK"  # from here on nothing can import from the repository

say "fresh environment $VENV ($("$PYTHON" --version)), wheels from $DIST plus PyPI"
uv venv --quiet --python "$PYTHON" "$VENV"
uv pip install --quiet --python "$VENV/bin/python" --find-links "$DIST" \
    "${requirements[@]}" langgraph "autogen-ext[openai]" "$markdown_docs"
uv pip check --python "$VENV/bin/python"

say "importing every module of every built wheel"
"$VENV/bin/python" -I "$RUN/check_installed.py" "$DIST" "$ROOT"

say "worked example: examples/autogen_memory.py"
"$VENV/bin/python" -I "$RUN/autogen_memory.py" | sed 's/^/   | /'
say "worked example: examples/openai_agents_session.py"
"$VENV/bin/python" -I "$RUN/openai_agents_session.py" | sed 's/^/   | /'
say "worked example: examples/agent_framework_memory.py"
"$VENV/bin/python" -I "$RUN/agent_framework_memory.py" | sed 's/^/   | /'

# readmes PYTHON [ARG...]: the READMEs' blocks under PYTHON, the wheels' commands on PATH.
readmes() {
    (cd "$RUN/readmes" && PATH="$VENV/bin:$PATH" PYTHONPATH="$RUN" env -u OPENAI_API_KEY "$1" \
        -m pytest -v -p no:cacheprovider -p readme_blocks --markdown-docs "${@:2}" packages)
}
say "every README's Python blocks, verbatim, from the wheels; each quick start as \`python FILE\`"
began=$SECONDS
readmes "$VENV/bin/python"
say "the READMEs' blocks took $((SECONDS - began))s"
say "the README blocks marked <!-- snippet: env autogen-openai -->, in the same environment"
readmes "$VENV/bin/python" --snippet-env autogen-openai

# AutoGen's MCP tools need mcp<2, which mnem-mcp's own environment cannot hold: as its README
# says, that client gets an environment of its own and finds mnem-mcp on PATH.
say "the README blocks marked <!-- snippet: env autogen-mcp -->, in their own environment"
uv venv --quiet --python "$PYTHON" "$WORK/autogen-mcp"
uv pip install --quiet --python "$WORK/autogen-mcp/bin/python" \
    autogen-agentchat "autogen-ext[mcp]" "mcp<2" "$markdown_docs"
readmes "$WORK/autogen-mcp/bin/python" --snippet-env autogen-mcp

cd "$ROOT"
bash scripts/ci/sdist_tests.sh "$DIST"

# mnem-crewai is outside the workspace (crewai's pins): built by path, checked as the others,
# then installed beside the kit's wheel in an environment of its own, where its worked
# example runs from the wheel.
CREWAI=$WORK/crewai
say "mnem-crewai: wheel and sdist (uv build packages/mnem-crewai --no-sources), checked"
uv build --quiet packages/mnem-crewai --no-sources --out-dir "$CREWAI/dist"
uvx --python "$PYTHON" --from 'twine>=6.1' twine check --strict "$CREWAI"/dist/*
uvx --python "$PYTHON" --from 'check-wheel-contents>=0.6.3' check-wheel-contents \
    --package packages/mnem-crewai/src/mnem_crewai "$CREWAI"/dist/mnem_crewai-*.whl
cp examples/crewai_memory.py "$CREWAI/"
uv venv --quiet --python "$PYTHON" "$CREWAI/venv"
uv pip install --quiet --python "$CREWAI/venv/bin/python" "$CREWAI"/dist/mnem_crewai-*.whl \
    "$(ls "$DIST"/mnem_adapter_kit-*.whl)"
uv pip check --python "$CREWAI/venv/bin/python"
say "worked example from the wheel: examples/crewai_memory.py"
(cd "$CREWAI" && "$CREWAI/venv/bin/python" -I crewai_memory.py | sed 's/^/   | /')

say "built distributions"
for artifact in "$DIST"/*.whl "$DIST"/*.tar.gz "$CREWAI"/dist/*; do
    printf '   %-48s %8s bytes\n' "$(basename "$artifact")" "$(wc -c <"$artifact" | tr -d ' ')"
done
say "wheels.sh passed in $((SECONDS - started))s"
