# Sourced by the scripts here and inspector_check.sh: strict mode, the checkout's root
# as working directory, no Python downloads by uv, PYTHON (MNEM_CI_PYTHON, else python3.11).
set -euo pipefail
MNEM_CI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$MNEM_CI_DIR/../.." && pwd)
cd "$ROOT"
export UV_PYTHON_DOWNLOADS=never PYTHONUNBUFFERED=1
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"
SUMMARY=() FAILED=0

say() { printf -- '-- %s\n' "$*"; }
# scratch NAME: WORK, a temporary directory removed when the script exits.
scratch() { WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-$1.XXXXXX") && trap 'rm -rf "$WORK"' EXIT; }
# release ARG...: scripts/ci/release.py under PYTHON, with packaging (and tomli before 3.11).
release() {
    uv run --quiet --no-project --isolated --python "$PYTHON" --with packaging \
        --with 'tomli; python_version < "3.11"' python "$MNEM_CI_DIR/release.py" "$@"
}
# fresh VENV ARG...: a new environment VENV (PYTHON), `uv pip install ARG...` there, checked.
fresh() {
    uv venv --quiet --python "$PYTHON" "$1"
    uv pip install --quiet --python "$1/bin/python" "${@:2}"
    uv pip check --quiet --python "$1/bin/python"
}

# npm_pinned NAME DIR: `npm ci` of the tree scripts/ci/npm/NAME locks into DIR, unless DIR holds
# that lockfile's install already. The lock pins what lies beneath too: the reference memory
# server's tool schemas change with the zod npm would otherwise pick.
npm_pinned() {
    local locked="$MNEM_CI_DIR/npm/$1" dir=$2
    cmp -s "$locked/package-lock.json" "$dir/node_modules/.mnem-ci-lock.json" && return 0
    say "installing scripts/ci/npm/$1 into $dir (npm ci, from its lockfile)"
    mkdir -p "$dir"
    cp "$locked/package.json" "$locked/package-lock.json" "$dir"/
    (cd "$dir" && npm ci --no-audit --no-fund --silent)
    cp "$locked/package-lock.json" "$dir/node_modules/.mnem-ci-lock.json"
}

# stage PACKAGE...: RUN with check_installed.py, readme_blocks.py and, under RUN/readmes, the
# packages' READMEs, so the checks on an environment import nothing from the checkout; and
# MARKDOWN_DOCS, the pytest-markdown-docs uv.lock pins, to install beside the built wheels.
stage() {
    MARKDOWN_DOCS=$(uv export --frozen --no-hashes --all-packages --no-emit-workspace |
        sed -n 's/^\(pytest-markdown-docs==[^ ;]*\).*/\1/p')
    RUN=$WORK/run
    mkdir -p "$RUN/readmes"
    cp "$MNEM_CI_DIR/check_installed.py" "$MNEM_CI_DIR/readme_blocks.py" "$RUN"/
    printf 'packages/%s/README.md\n' "$@" | tar -cf - -T - | tar -xf - -C "$RUN/readmes"
}
# readmes PYTHON ARG...: the staged READMEs' blocks (pytest ARG... under PYTHON), VENV on PATH.
readmes() {
    (cd "$RUN/readmes" && PATH="$VENV/bin:$PATH" PYTHONPATH="$RUN" env -u OPENAI_API_KEY \
        "$1" -m pytest -v -p no:cacheprovider -p readme_blocks --markdown-docs "${@:2}" packages)
}

# checked LABEL CMD...: CMD in a subshell with errexit, its outcome into SUMMARY (and FAILED). Not
# `f || status=$?`: there bash ignores `set -e` inside f, so a failing step would go unnoticed.
checked() {
    local began=$SECONDS status
    set +e
    (set -e; "${@:2}")
    status=$?
    set -e
    SUMMARY+=("$1: $([ "$status" -eq 0 ] && echo passed || echo FAILED) ($((SECONDS - began))s)")
    [ "$status" -eq 0 ] || FAILED=1
}
# summary TITLE: SUMMARY under TITLE, then exit 1 if anything failed.
summary() {
    say "$1"
    printf '   %s\n' "${SUMMARY[@]}"
    exit "$FAILED"
}
