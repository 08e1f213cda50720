#!/usr/bin/env bash
# Install the reference MCP memory server (npm's @modelcontextprotocol/server-memory, pinned),
# which the knowledge-graph differential test runs beside mnem-mcp's knowledge-graph profile.
#
#   bash scripts/ci/reference_memory.sh     MNEM_REFERENCE_MEMORY=DIR picks where it goes
#
# The test (packages/mnem-mcp/tests/test_knowledge_graph_reference.py) looks in the same default
# and runs DIR/node_modules/@modelcontextprotocol/server-memory/dist/index.js with node.
set -euo pipefail

SERVER_MEMORY_VERSION=2026.8.31
DIR="${MNEM_REFERENCE_MEMORY:-$HOME/.cache/mnem-reference-memory}"
PACKAGE_JSON="$DIR/node_modules/@modelcontextprotocol/server-memory/package.json"

node --version >/dev/null

installed=""
if [ -f "$PACKAGE_JSON" ]; then
    installed=$(node -p "require(process.argv[1]).version" "$PACKAGE_JSON")
fi
if [ "$installed" != "$SERVER_MEMORY_VERSION" ]; then
    echo "-- installing @modelcontextprotocol/server-memory $SERVER_MEMORY_VERSION (npm) into $DIR"
    mkdir -p "$DIR"
    npm install --prefix "$DIR" --no-audit --no-fund --silent --no-save \
        "@modelcontextprotocol/server-memory@$SERVER_MEMORY_VERSION"
fi
echo "@modelcontextprotocol/server-memory $(node -p "require(process.argv[1]).version" "$PACKAGE_JSON") in $DIR"
