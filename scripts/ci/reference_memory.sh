#!/usr/bin/env bash
# Install the reference MCP memory server (npm's @modelcontextprotocol/server-memory), which the
# knowledge-graph differential test runs beside mnem-mcp's knowledge-graph profile. What it
# installs is locked in scripts/ci/npm/reference-memory (package-lock.json, installed with
# `npm ci`): the server's version and every version beneath it, zod included, whose version
# changes the server's tool schemas.
#
#   bash scripts/ci/reference_memory.sh     MNEM_REFERENCE_MEMORY=DIR picks where it goes
#
# The test (packages/mnem-mcp/tests/test_knowledge_graph_reference.py) looks in the same default
# and runs DIR/node_modules/@modelcontextprotocol/server-memory/dist/index.js with node.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

DIR="${MNEM_REFERENCE_MEMORY:-$HOME/.cache/mnem-reference-memory}"
PACKAGE_JSON="$DIR/node_modules/@modelcontextprotocol/server-memory/package.json"

node --version >/dev/null
npm_pinned reference-memory "$DIR"
version() { node -p "require(process.argv[1]).version" "$1"; }
echo "@modelcontextprotocol/server-memory $(version "$PACKAGE_JSON")" \
    "(zod $(version "$DIR/node_modules/zod/package.json")) in $DIR"
