#!/usr/bin/env bash
# Raw SSE framing with curl against `llmwb serve`: headers (text/event-stream, chunked), every
# event "data: {json}\n\n" with nothing else between, the last "data: [DONE]\n\n"; an error
# before the stream starts is a plain JSON error object with its status; SIGTERM mid-stream ends
# the stream with finish_reason "abort" and [DONE], and the server exits 0.
# Usage: run_curl_sse_test.sh LLMWB_BINARY
set -u
LLMWB="$1"
command -v curl >/dev/null || { echo "FAIL: curl is not installed"; exit 1; }
WORK="$(mktemp -d)"
trap 'kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT
export XDG_DATA_HOME="$WORK/data"
fail() { echo "FAIL: $*"; exit 1; }
# A free port: bind 0 and read it back (python3 or node, whichever is there).
PORT="$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])' 2>/dev/null \
  || node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
"$LLMWB" serve --port "$PORT" --device cpu > "$WORK/out" 2> "$WORK/err" &
SERVER=$!
for _ in $(seq 1 200); do
  grep -q "listening on" "$WORK/out" 2>/dev/null && break
  kill -0 "$SERVER" 2>/dev/null || break
  sleep 0.05
done
grep -q "listening on http://127.0.0.1:$PORT" "$WORK/out" || { cat "$WORK/err"; fail "llmwb serve did not start"; }
URL="http://127.0.0.1:$PORT"

curl -sS -N -D "$WORK/h" -o "$WORK/body" "$URL/v1/chat/completions" \
  -H 'Content-Type: application/json' \
  -d '{"messages":[{"role":"user","content":"Hello"}],"max_tokens":12,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}' \
  || fail "curl failed"
grep -qi '^content-type: text/event-stream' "$WORK/h" || fail "no text/event-stream header: $(cat "$WORK/h")"
grep -qi '^transfer-encoding: chunked' "$WORK/h" || fail "not chunked"
# Every event is exactly one "data: " line followed by an empty line.
awk 'BEGIN{RS="\n\n"; bad=0; n=0} length($0)>0 { n++; if ($0 !~ /^data: / || index($0, "\n") > 0) bad++ }
     END { if (bad || n < 3) exit 1 }' "$WORK/body" || fail "bad SSE framing: $(head -c 400 "$WORK/body")"
[ "$(tail -c 14 "$WORK/body" | od -An -c | tr -d ' \n')" = 'data:[DONE]\n\n' ] \
  || fail "the stream does not end with data: [DONE]"
grep -q '"role":"assistant"' "$WORK/body" || fail "no role delta"
grep -q '"usage":{"prompt_tokens"' "$WORK/body" || fail "no usage chunk"

# An error before streaming: a JSON error object with its status, not SSE.
CODE="$(curl -sS -o "$WORK/err400" -w '%{http_code}' "$URL/v1/completions" -d '{"prompt":"a","stream":true,"top_p":7}')"
[ "$CODE" = 400 ] || fail "expected 400, got $CODE"
grep -q '"param":"top_p"' "$WORK/err400" || fail "error does not name top_p: $(cat "$WORK/err400")"

# SIGTERM mid-stream: the stream still ends properly, the server exits 0.
curl -sS -N -o "$WORK/long" "$URL/v1/completions" \
  -d '{"prompt":"The model","max_tokens":8000,"ignore_eos":true,"stream":true,"n":4}' &
CURL=$!
sleep 0.3
kill -TERM "$SERVER"
wait "$SERVER"; SRC=$?
wait "$CURL"
[ "$SRC" = 0 ] || fail "llmwb serve exited with $SRC after SIGTERM"
[ "$(grep -c '"finish_reason":"' "$WORK/long")" = 4 ] || fail "not every choice finished: $(tail -c 300 "$WORK/long")"
tail -c 20 "$WORK/long" | grep -q 'data: \[DONE\]' || fail "the aborted stream has no [DONE]"
echo "OK: SSE framing, error before the stream, graceful SIGTERM"
