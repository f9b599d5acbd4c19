#!/usr/bin/env bash
# The MCP Inspector's command-line mode (@modelcontextprotocol/inspector, pinned in devDependencies)
# against a server started for the purpose: the demo workspace on the embedded database, a free
# loopback port, the demo's API key. Lists the tools and prompts and calls two tools; fails on any
# missing tool, output schema, or error result. Needs nothing from the network: the Inspector runs
# from node_modules (bun install fetched it), the server talks only to itself.
set -euo pipefail
cd "$(dirname "$0")/../.."

inspector=node_modules/.bin/mcp-inspector
[ -x "$inspector" ] || { echo "inspector.sh: $inspector missing: run bun install" >&2; exit 1; }

work="$(mktemp -d)"
port="$(bun -e 'const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }); console.log(s.port); s.stop(true)')"
log="$work/server.log"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A server of its own: embedded database in a temp directory, scanner off, the demo workspace.
env -u DATABASE_URL -u REDIS_URL PORT="$port" HOST=127.0.0.1 DATA_DIR="$work/data" SPOOL_DIR="$work/spool" \
  SCANNER_ENABLED=false DEMO=1 DEMO_DAYS=7 LOG_REQUESTS=false \
  bun run src/app/main.ts >"$log" 2>&1 &
server_pid=$!

for _ in $(seq 1 120); do
  if bun -e "fetch('http://127.0.0.1:$port/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" 2>/dev/null; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$log" >&2; echo "inspector.sh: the server exited" >&2; exit 1; fi
  sleep 1
done
key="$(sed -n 's/^ *API key: *\(aivkey_[^ ]*\).*/\1/p' "$log" | tail -1)"
[ -n "$key" ] || { cat "$log" >&2; echo "inspector.sh: no demo API key in the server's output" >&2; exit 1; }
brand="$(sed -n 's/^ *brand \([a-z0-9-]*\):.*/\1/p' "$log" | head -1)"
# The server listens before the demo's days are written (they fill in the background): wait for them.
for _ in $(seq 1 300); do
  if grep -q "demo workspace filled" "$log"; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$log" >&2; echo "inspector.sh: the server exited" >&2; exit 1; fi
  sleep 1
done

# Offline at run time: npm (which the Inspector may consult) is told not to reach the registry.
export npm_config_offline=true
inspect() {
  "$inspector" --cli "http://127.0.0.1:$port/mcp" --transport http "$@" --header "Authorization: Bearer $key"
}

check() { # check <file> <bun expression over `r`, the parsed JSON> <what>
  bun -e "const r = JSON.parse(require('fs').readFileSync('$1', 'utf8')); if (!($2)) { console.error('inspector.sh: $3'); console.error(JSON.stringify(r).slice(0, 2000)); process.exit(1) }"
}

inspect --method tools/list >"$work/tools.json"
check "$work/tools.json" "r.tools.length === 21 && r.tools.every((t) => t.description.length > 200 && t.outputSchema?.type === 'object' && t.inputSchema.additionalProperties === false)" \
  "tools/list: expected 21 described tools with input and output schemas"
echo "inspector: tools/list: $(bun -e "console.log(JSON.parse(require('fs').readFileSync('$work/tools.json','utf8')).tools.map((t) => t.name).join(' '))")"

inspect --method prompts/list >"$work/prompts.json"
check "$work/prompts.json" "r.prompts.length === 3" "prompts/list: expected 3 prompts"

inspect --method tools/call --tool-name list_brands >"$work/list_brands.json"
check "$work/list_brands.json" "!r.isError && r.structuredContent.brands.some((b) => b.brand_slug === '$brand')" "list_brands: expected the demo brands"
echo "inspector: list_brands: $(bun -e "console.log(JSON.parse(require('fs').readFileSync('$work/list_brands.json','utf8')).structuredContent.count)") brands"

inspect --method tools/call --tool-name get_brand_mentions --tool-arg "slug=$brand" --tool-arg limit=3 >"$work/mentions.json"
check "$work/mentions.json" "!r.isError && r.structuredContent.mentions.length === 3 && r.structuredContent.page.total > 3" \
  "get_brand_mentions: expected a page of 3 mentions"
echo "inspector: get_brand_mentions: 3 of $(bun -e "console.log(JSON.parse(require('fs').readFileSync('$work/mentions.json','utf8')).structuredContent.page.total)") mentions"
echo "inspector: ok"
