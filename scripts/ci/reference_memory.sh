#!/usr/bin/env bash
# The reference MCP memory server for the knowledge-graph differential test, into
# MNEM_REFERENCE_MEMORY (the test's default too), locked in scripts/ci/npm/reference-memory.
source "$(dirname "$0")/lib.sh"
DIR="${MNEM_REFERENCE_MEMORY:-$HOME/.cache/mnem-reference-memory}"
npm_pinned reference-memory "$DIR"
npm ls --prefix "$DIR" --all zod  # the server, and the zod beneath it that shapes its tool schemas
