# Shell helpers shared by the scripts in scripts/ci (sourced, not run).

say() { printf -- '-- %s\n' "$*"; }

MNEM_CI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# npm_pinned NAME DIR: the npm tree scripts/ci/npm/NAME locks (package.json, package-lock.json),
# installed into DIR with `npm ci`, unless DIR already holds exactly that lockfile's install.
# The lockfile pins every version beneath the package too: the reference memory server's tool
# schemas change with the zod that npm would otherwise pick.
npm_pinned() {
    local locked="$MNEM_CI_DIR/npm/$1" dir=$2
    if cmp -s "$locked/package-lock.json" "$dir/node_modules/.mnem-ci-lock.json"; then
        return 0
    fi
    say "installing scripts/ci/npm/$1 into $dir (npm ci, from its lockfile)"
    mkdir -p "$dir"
    cp "$locked/package.json" "$locked/package-lock.json" "$dir"/
    (cd "$dir" && npm ci --no-audit --no-fund --silent)
    cp "$locked/package-lock.json" "$dir/node_modules/.mnem-ci-lock.json"
}

# built_pins DIST: print `name==version` for every wheel in DIST. Used as constraints, so a
# same-named release on PyPI can never stand in for what was just built.
built_pins() {
    local wheel base name version
    for wheel in "$1"/*.whl; do
        base=$(basename "$wheel")
        name=${base%%-*}
        version=${base#*-}
        version=${version%%-*}
        printf '%s==%s\n' "${name//_/-}" "$version"
    done
}

# locked NAME: `NAME==VERSION` as uv.lock pins it, for a tool installed beside built wheels.
locked() {
    uv export --frozen --no-hashes --all-packages --no-emit-workspace | sed -n "s/^\($1==[^ ;]*\).*/\1/p"
}

# check_source DIST URL: every wheel in DIST names URL as its Source (Project-URL), so what is
# published points its users at the repository that built it.
check_source() {
    local wheel
    for wheel in "$1"/*.whl; do
        if ! unzip -p "$wheel" '*.dist-info/METADATA' | grep -Fx "Project-URL: Source, $2" >/dev/null; then
            echo "$(basename "$wheel") does not name $2 as its Source" >&2
            return 1
        fi
    done
}

# run_checked CMD...: run CMD in a subshell with errexit on and set `status` to its exit code.
# Call it as a plain statement: after `f || status=$?` bash ignores `set -e` inside f, so a
# failing step in f would go unnoticed.
run_checked() {
    set +e
    (
        set -e
        "$@"
    )
    status=$?
    set -e
}
