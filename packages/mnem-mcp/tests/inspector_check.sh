#!/usr/bin/env bash
# Check mnem-mcp from outside the Python SDK, with the MCP Inspector CLI over stdio.
#
# Lists the tools, remembers a value, recalls it and reads an error's code.
# Exits non-zero on the first failure. Needs Node (npx) and the workspace's
# Python environment (`uv sync --all-packages`).
#
#   PYTHON     the interpreter with mnem-mcp installed (default: .venv/bin/python)
#   INSPECTOR  the npm package to run (default: the newest release that runs on
#              Node 20; on Node >= 22.19 "@modelcontextprotocol/inspector@latest" works too)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
inspector=${INSPECTOR:-@modelcontextprotocol/inspector@0.15.0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

inspect() {
    npx -y "$inspector" --cli "$python" -m mnem_mcp --store "$work/store" "$@" 2>"$work/stderr"
}

# Reads the Inspector's JSON on stdin; runs the Python statements in $1 with it as `out`.
expect() {
    "$python" -c "import json, sys
out = json.load(sys.stdin)
$1" || {
        echo "inspector_check: $2" >&2
        cat "$work/stderr" >&2
        exit 1
    }
}

inspect --method tools/list | expect '
names = {tool["name"] for tool in out["tools"]}
want = {"remember", "revise", "remember_many", "forget", "recall", "recall_at",
        "history", "why", "when_did", "whats_new"}
assert names == want, sorted(names ^ want)
assert all(tool.get("description") and tool.get("inputSchema") for tool in out["tools"])
' "tools/list did not list exactly the memory tools"

inspect --method tools/call --tool-name remember \
    --tool-arg node_id=inspector/check --tool-arg content=hello \
    --tool-arg 'provenance={"source": "inspector_check.sh"}' | expect '
assert not out.get("isError"), out
assert out["structuredContent"]["changes"] == {"inspector/check": "added"}, out
' "remember did not write the node"

inspect --method tools/call --tool-name recall --tool-arg node_id=inspector/check | expect '
(node,) = out["structuredContent"]["nodes"]
assert node["content"] == "hello", node
assert node["provenance"]["source"] == "inspector_check.sh", node
' "recall did not return what remember wrote"

# Inspector 2.x exits non-zero on a tool error; 0.x exits 0. Either way the output is checked.
{ inspect --method tools/call --tool-name recall_at --tool-arg at=0000dead || true; } | expect '
assert out["isError"] is True, out
error = json.loads(out["content"][0]["text"])["error"]
assert error["code"] == "invalid_ref", error
assert out["_meta"]["mnem/error"] == error, out
' "an unknown commit did not come back as a tool error with code invalid_ref"

echo "inspector_check: ok ($inspector)"
