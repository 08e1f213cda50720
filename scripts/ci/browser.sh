#!/usr/bin/env bash
# Debian's chromium and playwright-core (locked in scripts/ci/npm/browser; it drives that chromium)
# for the history view's browser test, which looks in the same MNEM_BROWSER_TOOLS/MNEM_CHROMIUM.
source "$(dirname "$0")/lib.sh"
TOOLS="${MNEM_BROWSER_TOOLS:-$HOME/.cache/mnem-browser}" CHROMIUM="${MNEM_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM" ]; then
    say "installing chromium (Debian)"
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        chromium fonts-dejavu-core >/dev/null
fi
"$CHROMIUM" --version
npm_pinned browser "$TOOLS"
npm ls --prefix "$TOOLS"
