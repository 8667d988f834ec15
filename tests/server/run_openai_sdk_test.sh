#!/usr/bin/env bash
# ctest wrapper of openai_sdk_test.mjs: starts `llmwb serve` (the demo model, an API key) on a
# free loopback port, runs the SDK test against it, then stops the server with SIGINT and checks
# that it shuts down cleanly (exit 0). Fails (never skips) when node or the npm package is missing.
# Usage: run_openai_sdk_test.sh LLMWB_BINARY
set -u
LLMWB="$1"
HERE="$(cd "$(dirname "$0")" && pwd)"
ASSETS="${LLMWB_TEST_ASSETS:-$HOME/.cache/llmwb/test-assets}"
export NODE_PATH="${NODE_PATH:-$ASSETS/npm/node_modules}"
if ! command -v node >/dev/null; then
  echo "FAIL: node is not installed (scripts/fetch-test-assets.sh needs it too)"; exit 1
fi
if [ ! -d "$NODE_PATH/openai" ]; then
  echo "FAIL: npm package openai missing under $NODE_PATH; run scripts/fetch-test-assets.sh"; exit 1
fi
WORK="$(mktemp -d)"
trap 'kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT
export XDG_DATA_HOME="$WORK/data" # the demo model is written there
KEY="sk-sdk-test"
# Under a virtual-memory limit node's fetch cannot start (see openai_sdk_test.mjs).
[ "$(ulimit -v)" != "unlimited" ] && export LLMWB_SDK_FETCH=node-http
PORT="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
GREEDY="$("$LLMWB" generate --prompt "The model" --max-tokens 12 --temperature 0 --json --device cpu \
  | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).text))')"
"$LLMWB" serve --port "$PORT" --api-key "$KEY" --served-model-name demo --device cpu \
  --max-num-seqs 16 > "$WORK/serve.out" 2> "$WORK/serve.err" &
SERVER=$!
for _ in $(seq 1 200); do
  grep -q "listening on" "$WORK/serve.out" 2>/dev/null && break
  kill -0 "$SERVER" 2>/dev/null || break
  sleep 0.05
done
if ! grep -q "listening on http://127.0.0.1:$PORT (model demo)" "$WORK/serve.out"; then
  echo "FAIL: llmwb serve did not start"; cat "$WORK/serve.out" "$WORK/serve.err"; exit 1
fi
node "$HERE/openai_sdk_test.mjs" "http://127.0.0.1:$PORT/v1" "$KEY" demo "$GREEDY"
RC=$?
kill -INT "$SERVER"
wait "$SERVER"
SRC=$?
if [ "$SRC" -ne 0 ]; then
  echo "FAIL: llmwb serve exited with $SRC after SIGINT"; cat "$WORK/serve.err"; RC=1
fi
exit $RC
