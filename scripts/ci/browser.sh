#!/usr/bin/env bash
# Install what the history view's browser test and benchmark need: Debian's chromium and the
# npm package playwright-core (no browser download: it drives the system chromium), locked in
# scripts/ci/npm/browser (package-lock.json, installed with `npm ci`).
#
#   bash scripts/ci/browser.sh        MNEM_BROWSER_TOOLS=DIR picks where playwright-core goes
#
# The test (tests/history_view/test_page_in_browser.py) finds both in the same defaults.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

TOOLS="${MNEM_BROWSER_TOOLS:-$HOME/.cache/mnem-browser}"
CHROMIUM="${MNEM_CHROMIUM:-/usr/bin/chromium}"

if [ ! -x "$CHROMIUM" ]; then
    echo "-- installing chromium (Debian)"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        chromium fonts-dejavu-core >/dev/null
fi
"$CHROMIUM" --version

npm_pinned browser "$TOOLS"
echo "playwright-core $(node -p "require(process.argv[1]).version" "$TOOLS/node_modules/playwright-core/package.json") in $TOOLS"
