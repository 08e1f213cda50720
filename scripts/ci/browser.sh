#!/usr/bin/env bash
# Install what the history view's browser test and benchmark need: Debian's chromium and the
# npm package playwright-core (no browser download: it drives the system chromium).
#
#   bash scripts/ci/browser.sh        MNEM_BROWSER_TOOLS=DIR picks where playwright-core goes
#
# The test (tests/history_view/test_page_in_browser.py) finds both in the same defaults.
set -euo pipefail

PLAYWRIGHT_CORE_VERSION=1.65.1
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

installed=""
if [ -f "$TOOLS/node_modules/playwright-core/package.json" ]; then
    installed=$(node -p "require('$TOOLS/node_modules/playwright-core/package.json').version")
fi
if [ "$installed" != "$PLAYWRIGHT_CORE_VERSION" ]; then
    echo "-- installing playwright-core $PLAYWRIGHT_CORE_VERSION (npm) into $TOOLS"
    mkdir -p "$TOOLS"
    npm install --prefix "$TOOLS" --no-audit --no-fund --silent --no-save \
        "playwright-core@$PLAYWRIGHT_CORE_VERSION"
fi
echo "playwright-core $(node -p "require('$TOOLS/node_modules/playwright-core/package.json').version") in $TOOLS"
