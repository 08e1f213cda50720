#!/usr/bin/env bash
# The reference MCP memory server for the knowledge-graph differential test, into
# MNEM_REFERENCE_MEMORY (the test's default too), locked in scripts/ci/npm/reference-memory.
source "$(dirname "$0")/lib.sh"
DIR="${MNEM_REFERENCE_MEMORY:-$HOME/.cache/mnem-reference-memory}"
node --version >/dev/null
npm_pinned reference-memory "$DIR"
version() { node -p "require(process.argv[1]).version" "$DIR/node_modules/$1/package.json"; }
echo "@modelcontextprotocol/server-memory $(version @modelcontextprotocol/server-memory) (zod $(version zod)) in $DIR"
