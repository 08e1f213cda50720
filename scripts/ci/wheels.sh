#!/usr/bin/env bash
# Build every package as a release does and check the artifacts; in a fresh environment outside
# the workspace, the wheels plus PyPI, import every module and run the worked examples and every
# README's Python blocks (readme_blocks.py, no API key set); then each package's tests from its sdist.
source "$(dirname "$0")/lib.sh"
PACKAGES=(mnem-adapter-kit mnem-autogen mnem-langgraph mnem-mcp mnem-openai-agents mnem-agent-framework)
scratch wheels
DIST=$WORK/dist VENV=$WORK/venv RUN=$WORK/run
started=$SECONDS

# check_built PACKAGE DIR: twine check --strict; its wheel holds exactly the package's source tree.
check_built() {
    uvx --python "$PYTHON" --from 'twine>=6.1' twine check --strict "$2/${1//-/_}"-*
    uvx --python "$PYTHON" --from 'check-wheel-contents>=0.6.3' check-wheel-contents \
        --package "packages/$1/src/${1//-/_}" "$2/${1//-/_}"-*.whl
}
say "building ${PACKAGES[*]} with --no-sources into $DIST, each checked with twine and check-wheel-contents"
for package in "${PACKAGES[@]}"; do
    uv build --quiet --package "$package" --no-sources --out-dir "$DIST"
    check_built "$package" "$DIST"
done
# On GitHub Actions, the metadata must name the repository the build runs in.
[ -z "${GITHUB_REPOSITORY:-}" ] || check_source "$DIST" "https://github.com/$GITHUB_REPOSITORY"

# Pinned to the built versions with the READMEs' extras, so a same-named PyPI release cannot win;
# autogen-ext[openai] (which Studio brings) for the AutoGen README's `env autogen-openai` block.
mapfile -t requirements < <(built_pins "$DIST" | sed -e 's/^mnem-adapter-kit==/mnem-adapter-kit[testing]==/' \
    -e 's/^mnem-autogen==/mnem-autogen[agentchat]==/' -e 's/^mnem-langgraph==/mnem-langgraph[index]==/')
markdown_docs=$(locked pytest-markdown-docs)
mkdir -p "$RUN"
cp scripts/ci/check_installed.py scripts/ci/readme_blocks.py examples/{autogen_memory,openai_agents_session,agent_framework_memory}.py "$RUN"/
# mnem-crewai's README runs in its own environment (crewai's pins): .ci/run's mnem-crewai step.
for readme in packages/*/README.md; do
    [ "$readme" = packages/mnem-crewai/README.md ] ||
        { mkdir -p "$RUN/readmes/${readme%/*}" && cp "$readme" "$RUN/readmes/$readme"; }
done
cd "$WORK"  # from here on nothing can import from the repository

say "fresh environment $VENV ($("$PYTHON" --version)), wheels from $DIST plus PyPI"
uv venv --quiet --python "$PYTHON" "$VENV"
uv pip install --quiet --python "$VENV/bin/python" --find-links "$DIST" \
    "${requirements[@]}" langgraph "autogen-ext[openai]" "$markdown_docs"
uv pip check --python "$VENV/bin/python"
say "importing every module of every built wheel"
"$VENV/bin/python" -I "$RUN/check_installed.py" "$DIST" "$ROOT"
for example in autogen_memory openai_agents_session agent_framework_memory; do
    say "worked example: examples/$example.py"
    "$VENV/bin/python" -I "$RUN/$example.py" | sed 's/^/   | /'
done

# readmes PYTHON [ARG...]: the READMEs' blocks under PYTHON, the wheels' commands on PATH.
readmes() {
    (cd "$RUN/readmes" && PATH="$VENV/bin:$PATH" PYTHONPATH="$RUN" env -u OPENAI_API_KEY "$1" \
        -m pytest -v -p no:cacheprovider -p readme_blocks --markdown-docs "${@:2}" packages)
}
say "every README's Python blocks, verbatim, from the wheels; each quick start as \`python FILE\`"
readmes "$VENV/bin/python"
say "the README blocks marked <!-- snippet: env autogen-openai -->, in the same environment"
readmes "$VENV/bin/python" --snippet-env autogen-openai
# AutoGen's MCP tools need mcp<2, which mnem-mcp cannot share: an environment of their own.
say "the README blocks marked <!-- snippet: env autogen-mcp -->, in their own environment"
uv venv --quiet --python "$PYTHON" "$WORK/autogen-mcp"
uv pip install --quiet --python "$WORK/autogen-mcp/bin/python" \
    autogen-agentchat "autogen-ext[mcp]" "mcp<2" "$markdown_docs"
readmes "$WORK/autogen-mcp/bin/python" --snippet-env autogen-mcp

# Each package's tests from its sdist, as a packager runs them: its wheel, the sdist's `test` group.
cd "$ROOT"
built_pins "$DIST" >"$WORK/constraints.txt"
failed=0
for package in "${PACKAGES[@]}"; do
    sdists=("$DIST/${package//-/_}"-*.tar.gz)
    [ ${#sdists[@]} -eq 1 ] && [ -f "${sdists[0]}" ] || { echo "no single sdist of $package in $DIST" >&2; exit 1; }
    began=$SECONDS source_dir=$WORK/$(basename "${sdists[0]}" .tar.gz) venv=$WORK/venv-$package
    tar -xzf "${sdists[0]}" -C "$WORK"
    say "[$package] $(basename "${sdists[0]}"): its wheel and its test group in a fresh environment"
    uv venv --quiet --python "$PYTHON" "$venv"
    uv pip install --quiet --python "$venv/bin/python" --find-links "$DIST" \
        --constraint "$WORK/constraints.txt" "$package" --group "$source_dir/pyproject.toml:test"
    uv pip check --quiet --python "$venv/bin/python"
    "$venv/bin/python" -I "$RUN/check_installed.py" "$DIST" "$ROOT" "$package"
    say "[$package] pytest in $(basename "$source_dir")/"
    status=0
    (cd "$source_dir" && "$venv/bin/python" -m pytest -q -p no:cacheprovider) || status=$?
    say "[$package] $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - began))s"
    [ "$status" -eq 0 ] || failed=1
done
[ "$failed" -eq 0 ] || exit 1

# mnem-crewai, outside the workspace: built by path, checked, its example run beside the kit wheel.
CREWAI=$WORK/crewai
say "mnem-crewai: wheel and sdist (uv build packages/mnem-crewai --no-sources), checked"
uv build --quiet packages/mnem-crewai --no-sources --out-dir "$CREWAI/dist"
check_built mnem-crewai "$CREWAI/dist"
cp examples/crewai_memory.py "$CREWAI/"
uv venv --quiet --python "$PYTHON" "$CREWAI/venv"
uv pip install --quiet --python "$CREWAI/venv/bin/python" "$CREWAI"/dist/mnem_crewai-*.whl "$DIST"/mnem_adapter_kit-*.whl
uv pip check --python "$CREWAI/venv/bin/python"
say "worked example from the wheel: examples/crewai_memory.py"
(cd "$CREWAI" && "$CREWAI/venv/bin/python" -I crewai_memory.py | sed 's/^/   | /')

say "built distributions"
for artifact in "$DIST"/*.whl "$DIST"/*.tar.gz "$CREWAI"/dist/*; do
    printf '   %-48s %8s bytes\n' "$(basename "$artifact")" "$(wc -c <"$artifact" | tr -d ' ')"
done
say "wheels.sh passed in $((SECONDS - started))s"
