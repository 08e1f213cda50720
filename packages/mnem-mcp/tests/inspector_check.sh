#!/usr/bin/env bash
# Check mnem-mcp from outside the Python SDK, with the MCP Inspector CLI.
#
# Over stdio: lists the tools, remembers a value, recalls it and reads an error's
# code; with --tools knowledge-graph, lists and calls the nine graph tools. Over streamable HTTP: two Inspector clients write at once to one server
# and nothing is lost; a server that requires a token refuses the Inspector,
# which sends none. Exits non-zero on the first failure. Needs Node (npx) and the workspace's
# Python environment (`uv sync --all-packages`).
#
#   PYTHON          the interpreter with mnem-mcp installed (default: .venv/bin/python)
#   MNEM_INSPECTOR  where the Inspector goes (default: ~/.cache/mnem-inspector): the tree
#                   scripts/ci/npm/inspector locks (0.15.0, the newest release that runs on
#                   Node 20), installed with `npm ci`
#   INSPECTOR       an npm package to run with `npx -y` instead, unlocked (on Node >= 22.19
#                   "@modelcontextprotocol/inspector@latest" works too)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
if [ -n "${INSPECTOR:-}" ]; then
    inspector=(npx -y "$INSPECTOR")
else
    source "$root/scripts/ci/lib.sh"
    installed=${MNEM_INSPECTOR:-$HOME/.cache/mnem-inspector}
    npm_pinned inspector "$installed"
    inspector=("$installed/node_modules/.bin/mcp-inspector")
    INSPECTOR="@modelcontextprotocol/inspector@$(node -p "require(process.argv[1]).version" \
        "$installed/node_modules/@modelcontextprotocol/inspector/package.json") (locked)"
fi
work=$(mktemp -d)
server_pid=
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
    fi
}
trap 'stop_server; rm -rf "$work"' EXIT

inspect() {
    "${inspector[@]}" --cli "$python" -m mnem_mcp --store "$work/store" "$@" 2>"$work/stderr"
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
want = {"remember", "revise", "remember_many", "forget", "restore", "recall", "recall_at",
        "search", "history", "why", "when_did", "whats_new"}
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

# --- the knowledge-graph profile: the reference memory server's nine tools -----

graph() {
    "${inspector[@]}" --cli "$python" -m mnem_mcp --store "$work/graph" --tools knowledge-graph \
        "$@" 2>"$work/stderr"
}
graph --method tools/list | expect '
names = [tool["name"] for tool in out["tools"]]
nine = ["create_entities", "create_relations", "add_observations", "delete_entities",
        "delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes"]
assert names[:9] == nine, names
' "tools/list with --tools knowledge-graph did not list the nine graph tools first"

graph --method tools/call --tool-name create_entities --tool-arg \
    'entities=[{"name":"Ada","entityType":"person","observations":["likes tea"]},{"name":"Bob","entityType":"person","observations":[]}]' \
    | expect 'assert [e["name"] for e in out["structuredContent"]["entities"]] == ["Ada", "Bob"], out' \
    "create_entities"
graph --method tools/call --tool-name create_relations \
    --tool-arg 'relations=[{"from":"Ada","to":"Bob","relationType":"knows"}]' \
    | expect 'assert len(out["structuredContent"]["relations"]) == 1, out' "create_relations"
graph --method tools/call --tool-name add_observations \
    --tool-arg 'observations=[{"entityName":"Bob","contents":["plays go","lives in Porto"]}]' \
    | expect 'assert out["structuredContent"]["results"][0]["addedObservations"] == ["plays go", "lives in Porto"], out' \
    "add_observations"
graph --method tools/call --tool-name search_nodes --tool-arg query=PORTO | expect '
assert [e["name"] for e in out["structuredContent"]["entities"]] == ["Bob"], out
assert len(out["structuredContent"]["relations"]) == 1, out
' "search_nodes"
graph --method tools/call --tool-name open_nodes --tool-arg 'names=["Ada"]' \
    | expect 'assert [e["name"] for e in out["structuredContent"]["entities"]] == ["Ada"], out' "open_nodes"
graph --method tools/call --tool-name delete_observations \
    --tool-arg 'deletions=[{"entityName":"Bob","observations":["plays go"]}]' \
    | expect 'assert out["structuredContent"]["success"] is True, out' "delete_observations"
graph --method tools/call --tool-name delete_relations \
    --tool-arg 'relations=[{"from":"Ada","to":"Bob","relationType":"knows"}]' \
    | expect 'assert out["structuredContent"]["message"] == "Relations deleted successfully", out' \
    "delete_relations"
graph --method tools/call --tool-name delete_entities --tool-arg 'entityNames=["Ada"]' \
    | expect 'assert out["structuredContent"]["message"] == "Entities deleted successfully", out' \
    "delete_entities"
graph --method tools/call --tool-name read_graph | expect '
assert out["structuredContent"] == {"entities": [{"name": "Bob", "entityType": "person",
    "observations": ["lives in Porto"]}], "relations": []}, out
' "read_graph after the other eight"

# --- streamable HTTP ----------------------------------------------------------

# Starts `mnem-mcp --transport http` on a free loopback port; sets $url and $server_pid.
serve_http() {
    "$python" -m mnem_mcp --store "$work/http-store" --transport http --port 0 \
        2>"$work/http.err" &
    server_pid=$!
    url=
    for _ in $(seq 300); do
        url=$(grep -o 'http://[^ ]*/mcp' "$work/http.err" || true)
        if [ -n "$url" ]; then return 0; fi
        sleep 0.1
    done
    echo "inspector_check: the HTTP server did not start" >&2
    cat "$work/http.err" >&2
    exit 1
}

over_http() {
    local errors=$1
    shift
    "${inspector[@]}" --cli "$url" --transport http "$@" 2>"$errors"
}

# One Inspector client writing five nodes, one call each.
http_writer() {
    for i in 1 2 3 4 5; do
        over_http "$work/$1.err" --method tools/call --tool-name remember \
            --tool-arg "node_id=http/$1/$i" --tool-arg "content=$i" >"$work/$1-$i.json" || return 1
    done
}

serve_http
over_http "$work/stderr" --method tools/list | expect '
assert "search" in {tool["name"] for tool in out["tools"]}, out
' "tools/list over HTTP did not list the tools"

http_writer first & first=$!
http_writer second & second=$!
wait "$first" || { echo "inspector_check: the first HTTP writer failed" >&2; cat "$work/first.err" >&2; exit 1; }
wait "$second" || { echo "inspector_check: the second HTTP writer failed" >&2; cat "$work/second.err" >&2; exit 1; }
over_http "$work/stderr" --method tools/call --tool-name recall --tool-arg prefix=http/ | expect '
page = out["structuredContent"]
assert page["total"] == 10, page
' "two Inspector clients writing at once over HTTP lost a write"
stop_server

# The Inspector CLI sends no Authorization header: a server that requires a token refuses it.
MNEM_MCP_TOKEN=$("$python" -c "import secrets; print(secrets.token_hex(16))") serve_http
if over_http "$work/stderr" --method tools/list >"$work/refused.json"; then
    echo "inspector_check: a request without the token was served" >&2
    exit 1
fi
grep -q "bearer token is required" "$work/stderr" "$work/refused.json" || {
    echo "inspector_check: a request without the token failed, but not for want of the token" >&2
    cat "$work/stderr" "$work/refused.json" >&2
    exit 1
}
stop_server

echo "inspector_check: ok ($INSPECTOR, stdio and HTTP)"
