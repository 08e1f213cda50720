#!/usr/bin/env bash
# Build every package as a release does and check the artifacts; in a fresh environment outside
# the workspace, the wheels plus PyPI, import every module and run the worked examples and every
# README's Python blocks (readme_blocks.py, no API key set); then each package's tests from its sdist.
source "$(dirname "$0")/lib.sh"
PACKAGES=(mnem-adapter-kit mnem-autogen mnem-langgraph mnem-mcp mnem-openai-agents mnem-agent-framework)
EXAMPLES=(autogen_memory.py openai_agents_session.py agent_framework_memory.py)
scratch wheels
DIST=$WORK/dist VENV=$WORK/venv

say "every package built as a release builds it (--no-sources), mnem-crewai (not a member) by path"
uv build --quiet --all-packages --no-sources --out-dir "$DIST"
uv build --quiet packages/mnem-crewai --no-sources --out-dir "$DIST"
(cd "$DIST" && wc -c -- *) | sed 's/^/   /'
uvx --python "$PYTHON" --from 'twine>=6.1' twine check --strict "$DIST"/*
say "check-wheel-contents: each wheel holds exactly its package's source tree"
for package in "${PACKAGES[@]}" mnem-crewai; do
    uvx --python "$PYTHON" --from 'check-wheel-contents>=0.6.3' check-wheel-contents \
        --package "packages/$package/src/${package//-/_}" "$DIST/${package//-/_}"-*.whl
done

# name==version of each wheel, so no same-named PyPI release stands in.
printf '%s\n' "$DIST"/*.whl | sed 's|.*/\([^-]*\)-\([^-]*\)-.*|\1==\2|' | tr _ - >"$WORK/pins.txt"
stage "${PACKAGES[@]}"  # mnem-crewai's README runs in its own environment: .ci/run's mnem-crewai step
cp "${EXAMPLES[@]/#/examples/}" examples/crewai_memory.py "$RUN"/
cd "$WORK"  # from here on nothing can import from the repository

say "fresh environment $VENV ($("$PYTHON" --version)), wheels from $DIST plus PyPI"
# The READMEs' extras; autogen-ext[openai] (which Studio brings) for the AutoGen README's
# `env autogen-openai` block.
fresh "$VENV" --find-links "$DIST" --constraint "$WORK/pins.txt" "mnem-adapter-kit[testing]" \
    "mnem-autogen[agentchat]" "mnem-langgraph[index]" mnem-mcp mnem-openai-agents mnem-agent-framework \
    langgraph "autogen-ext[openai]" "$MARKDOWN_DOCS"
say "importing every module of every built wheel"
"$VENV/bin/python" -I "$RUN/check_installed.py" "$DIST" "$ROOT" "${PACKAGES[@]}"
for example in "${EXAMPLES[@]}"; do
    say "worked example: examples/$example"
    "$VENV/bin/python" -I "$RUN/$example" | sed 's/^/   | /'
done
say "every README's Python blocks, verbatim, from the wheels; each quick start as \`python FILE\`"
readmes "$VENV/bin/python"
say "the README blocks marked <!-- snippet: env autogen-openai -->, in the same environment"
readmes "$VENV/bin/python" --snippet-env autogen-openai
# AutoGen's MCP tools need mcp<2, which mnem-mcp cannot share: an environment of their own.
say "the README blocks marked <!-- snippet: env autogen-mcp -->, in their own environment"
fresh "$WORK/autogen-mcp" autogen-agentchat "autogen-ext[mcp]" "mcp<2" "$MARKDOWN_DOCS"
readmes "$WORK/autogen-mcp/bin/python" --snippet-env autogen-mcp
# mnem-crewai, outside the workspace: its worked example from its wheel, beside the kit's.
say "worked example from the mnem-crewai wheel: examples/crewai_memory.py"
fresh "$WORK/crewai" "$DIST"/mnem_crewai-*.whl "$DIST"/mnem_adapter_kit-*.whl
"$WORK/crewai/bin/python" -I "$RUN/crewai_memory.py" | sed 's/^/   | /'

# sdist PACKAGE: its tests from its sdist, as a packager runs them: its wheel, the sdist's `test` group.
sdist() {
    local archive tree venv=$WORK/venv-$1
    archive=$(echo "$DIST/${1//-/_}"-*.tar.gz)
    tree=$WORK/$(basename "$archive" .tar.gz)
    tar -xzf "$archive" -C "$WORK"
    say "[$1] $(basename "$archive"): its wheel and its test group in a fresh environment, then pytest"
    fresh "$venv" --find-links "$DIST" --constraint "$WORK/pins.txt" "$1" \
        --group "$tree/pyproject.toml:test"
    "$venv/bin/python" -I "$RUN/check_installed.py" "$DIST" "$ROOT" "$1"
    (cd "$tree" && "$venv/bin/python" -m pytest -q -p no:cacheprovider)
}
for package in "${PACKAGES[@]}"; do
    checked "$package, the tests of its sdist" sdist "$package"
done
summary "every package's tests from its sdist"
