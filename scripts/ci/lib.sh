# Sourced by the scripts here, release.yml and inspector_check.sh: strict mode, the checkout's root
# as working directory, no Python downloads by uv, PYTHON (MNEM_CI_PYTHON, else python3.11).
set -euo pipefail
MNEM_CI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CALLER=$PWD ROOT=$(cd "$MNEM_CI_DIR/../.." && pwd)
cd "$ROOT"
export UV_PYTHON_DOWNLOADS=never PYTHONUNBUFFERED=1
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"

say() { printf -- '-- %s\n' "$*"; }
here() { (cd "$CALLER" && cd "$1" && pwd); }  # a path the caller gave, made absolute
# scratch NAME: WORK, a temporary directory removed when the script exits.
scratch() { WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnem-$1.XXXXXX") && trap 'rm -rf "$WORK"' EXIT; }
# release ARG...: scripts/ci/release.py under PYTHON, with packaging (and tomli before 3.11).
release() {
    uv run --quiet --no-project --isolated --python "$PYTHON" --with packaging \
        --with 'tomli; python_version < "3.11"' python "$MNEM_CI_DIR/release.py" "$@"
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

# built_pins DIST: `name==version` of each wheel in DIST, so no same-named PyPI release stands in.
built_pins() {
    local wheel name version
    for wheel in "$1"/*.whl; do
        IFS=- read -r name version _ <<<"$(basename "$wheel")"
        printf '%s==%s\n' "${name//_/-}" "$version"
    done
}

# locked NAME: `NAME==VERSION` as uv.lock pins it, for a tool installed beside built wheels.
locked() {
    uv export --frozen --no-hashes --all-packages --no-emit-workspace | sed -n "s/^\($1==[^ ;]*\).*/\1/p"
}

# check_source DIST URL: each wheel names URL as its Source, so users are sent to the repository
# that built it.
check_source() {
    local wheel
    for wheel in "$1"/*.whl; do
        unzip -p "$wheel" '*.dist-info/METADATA' | grep -Fx "Project-URL: Source, $2" >/dev/null ||
            { echo "$(basename "$wheel") does not name $2 as its Source" >&2; return 1; }
    done
}

# run_checked CMD...: CMD in a subshell with errexit, its exit code in `status`. A plain statement:
# inside `f || status=$?` bash ignores `set -e`, so a failing step in f would go unnoticed.
run_checked() {
    set +e
    (set -e; "$@")
    status=$?
    set -e
}
