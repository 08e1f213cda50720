# Shell helpers shared by the scripts in scripts/ci (sourced, not run).

say() { printf -- '-- %s\n' "$*"; }

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
