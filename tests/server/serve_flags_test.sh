#!/usr/bin/env bash
# `anchorage serve` flags: --help lists every flag with its default and llama-server's aliases,
# a bad value is a usage error (exit 2), ANCHORAGE_<FLAG> environment variables are read (the
# command line wins), the cache flags reach the caches (a live server's /v1/cache/stats and
# /v1/cache/clear) and the aliases reach the server (/props). The live server's log has a line
# per start-up phase and a request line with the cache split and no client text.
# usage: serve_flags_test.sh <anchorage binary> <tokenizer dir>
set -uo pipefail
bin="$1"
tokdir="${2:-}"
fail() { echo "FAIL: $*"; [ -n "${log:-}" ] && cat "$log"; exit 1; }

help="$("$bin" serve --help)" || fail "--help exited $?"
for flag in host port preset seed weight-dtype kv-dtype ctx threads queue max-body-bytes \
            max-tokens http-threads drain-s tokenizer-dir model-name reasoning-budget admin-token \
            anchor-spacing resident-gb resident-guest-max resident-stash-gb resident-pin-gb \
            resident-park-gb cache-gb store-entry-gb prefix-chunk response-cache-mb \
            mem-ceiling-gib mem-peak-gib reserve-slack-gib disk-budget-gb disk-min-free-gb \
            disk-ttl-days disk-admit-after disk-head-anchors disk-min-tokens disk-write-budget-gb \
            compaction resume-policy spill-gb spill-min-tokens spill-give-up-min-tokens \
            spill-codec draft draft-max draft-min-match suffix-store-mb suffix-store-scope; do
  grep -qE -- "--$flag <v> .*\(default: " <<<"$help" || fail "--help does not list --$flag"
done
for switch in no-cache end-anchor end-align no-store response-cache suffix-store-readonly \
              no-suffix-store; do
  grep -qE -- "--$switch .*\(default: (on|off)\)" <<<"$help" || fail "--help does not list --$switch"
done
for alias in "-m, --model <v>" "-c, --ctx-size, --ctx <v>" "-t, --threads <v>" \
             "-n, --n-predict <v>" "-np, --parallel <v>" "--api-key <v>" "--api-key-file <v>"; do
  grep -qF -- "$alias" <<<"$help" || fail "--help does not list $alias"
done
grep -q "ANCHORAGE_" <<<"$help" || fail "--help does not mention the environment variables"
# A bad --api-key-file is a start-up error (exit 1) naming the line, never the key.
keys="$(mktemp)"
printf 'sk-fine alpha\nsk-leaky one two\n' >"$keys"
err="$("$bin" serve --preset tiny --port 0 --no-cache --api-key-file "$keys" 2>&1 >/dev/null)"
rc=$?
rm -f "$keys"
[ $rc -eq 1 ] || fail "a bad --api-key-file exited $rc"
grep -q "line 2" <<<"$err" || fail "a bad --api-key-file's error does not name the line: $err"
grep -q "sk-" <<<"$err" && fail "a bad --api-key-file's error prints a key: $err"
err="$("$bin" serve --preset tiny --port 0 --no-cache --api-key-file /nonexistent/keys 2>&1 >/dev/null)"
[ $? -eq 1 ] || fail "a missing --api-key-file did not exit 1"
# docs/http-api.md's flag table names every flag and alias --help lists, and no other.
doc="$(dirname "$0")/../../docs/http-api.md"
table="$(grep -E '^\| `-' "$doc" | cut -d'|' -f2)"
[ -n "$table" ] || fail "no flag table in $doc"
helped="$(grep -oE -- '^  (-{1,2}[a-z][a-z-]*, )*--[a-z-]+' <<<"$help" | grep -oE -- '-{1,2}[a-z][a-z-]*')"
for name in $helped; do
  grep -qF -- "\`$name\`" <<<"$table" || fail "docs/http-api.md's flag table lacks $name"
done
for name in $(grep -oE -- '`-{1,2}[a-z][a-z-]*`' <<<"$table" | tr -d '`'); do
  grep -qxF -- "$name" <<<"$helped" || fail "docs/http-api.md's flag table has $name, --help does not"
done
for route in "POST /v1/chat/completions" "POST /v1/completions" "GET  /v1/models" "GET  /health" \
             "GET  /metrics" "/v1/cache/stats" "/v1/cache/peek" "/v1/cache/clear" \
             "POST /tokenize" "POST /detokenize" "GET  /props"; do
  grep -qF -- "$route" <<<"$help" || fail "--help does not list the route $route"
done

"$bin" serve --queue 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--queue 0 is not a usage error"
"$bin" serve --no-such-flag >/dev/null 2>&1; [ $? -eq 2 ] || fail "an unknown flag is not a usage error"
"$bin" serve --anchor-spacing 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--anchor-spacing 0 is not a usage error"
"$bin" serve --cache-gb -1 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--cache-gb -1 is not a usage error"
"$bin" serve --end-anchor=maybe >/dev/null 2>&1; [ $? -eq 2 ] || fail "--end-anchor=maybe is not a usage error"
err="$("$bin" serve --compaction summary 2>&1 >/dev/null)"; rc=$?
[ $rc -eq 2 ] || fail "--compaction summary is not a usage error (exit $rc)"
grep -q -- "--compaction must be client or continuation" <<<"$err" || fail "a bad --compaction is not named: $err"
err="$("$bin" serve -np 4 2>&1 >/dev/null)"; rc=$?
[ $rc -eq 2 ] || fail "-np 4 is not a usage error (exit $rc)"
grep -q -- "--parallel.*not built yet" <<<"$err" || fail "-np 4 does not say parallel is not yet built: $err"
err="$("$bin" serve --cache-scope shared 2>&1 >/dev/null)"; rc=$?
[ $rc -eq 2 ] || fail "--cache-scope shared is not a usage error (exit $rc)"
grep -q -- "--cache-scope" <<<"$err" || fail "--cache-scope shared is not named: $err"
"$bin" serve --api-key '' >/dev/null 2>&1; [ $? -eq 2 ] || fail "an empty --api-key is not a usage error"
"$bin" serve -n -2 >/dev/null 2>&1; [ $? -eq 2 ] || fail "-n -2 is not a usage error"
"$bin" serve -c 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "-c 0 is not a usage error"
"$bin" serve --ctx-size=0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--ctx-size=0 is not a usage error"
for bad in "--suffix-store-mb 0" "--suffix-store-mb 20000" "--suffix-store-scope prompts"; do
  err="$("$bin" serve $bad 2>&1 >/dev/null)"; rc=$?
  [ $rc -eq 2 ] || fail "$bad is not a usage error (exit $rc)"
  grep -q -- "${bad%% *} must be" <<<"$err" || fail "$bad is not named: $err"
done
err="$("$bin" serve --spill-codec lzma 2>&1 >/dev/null)"; rc=$?
[ $rc -eq 2 ] || fail "--spill-codec lzma is not a usage error (exit $rc)"
grep -q -- "--spill-codec must be zstd, blosc or none" <<<"$err" || fail "a bad --spill-codec is not named: $err"
ANCHORAGE_SPILL_CODEC=lz4 "$bin" serve >/dev/null 2>&1; [ $? -eq 2 ] || fail "ANCHORAGE_SPILL_CODEC not read"
err="$("$bin" serve --spill-give-up-min-tokens 0 2>&1 >/dev/null)"; rc=$?
[ $rc -eq 2 ] || fail "--spill-give-up-min-tokens 0 is not a usage error (exit $rc)"
grep -q -- "--spill-give-up-min-tokens must be >= 1" <<<"$err" || fail "a bad --spill-give-up-min-tokens is not named: $err"
ANCHORAGE_SPILL_GIVE_UP_MIN_TOKENS=-3 "$bin" serve >/dev/null 2>&1; [ $? -eq 2 ] || fail "ANCHORAGE_SPILL_GIVE_UP_MIN_TOKENS not read"
err="$("$bin" serve --mem-ceiling-gib 8 --mem-peak-gib 4 2>&1 >/dev/null)"
grep -q -- "--mem-peak-gib" <<<"$err" || fail "a peak under the ceiling is not named"
# The environment is read: a bad value there is the same usage error...
ANCHORAGE_KV_DTYPE=f64 "$bin" serve >/dev/null 2>&1; [ $? -eq 2 ] || fail "ANCHORAGE_KV_DTYPE not read"
err="$(ANCHORAGE_MAX_BODY_BYTES=0 "$bin" serve 2>&1 >/dev/null)"
grep -q -- "--max-body-bytes" <<<"$err" || fail "ANCHORAGE_MAX_BODY_BYTES not read"
ANCHORAGE_NO_CACHE=perhaps "$bin" serve >/dev/null 2>&1; [ $? -eq 2 ] || fail "ANCHORAGE_NO_CACHE not read"
# ...and the command line wins over it (this run then fails later, on the tokenizer path).
ANCHORAGE_QUEUE=0 "$bin" serve --queue 1 --tokenizer-dir /nonexistent >/dev/null 2>&1
[ $? -eq 1 ] || fail "--queue on the command line did not override ANCHORAGE_QUEUE"

# A live server: the flags (and an environment switch) reach the caches.
[ -n "$tokdir" ] || { echo "serve_flags: 1 passed, 0 failed (no tokenizer dir: live part skipped)"; exit 0; }
log="$(mktemp)"
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$log"' EXIT
ANCHORAGE_NO_STORE=on "$bin" serve --preset tiny --port 0 -c 2048 -t 1 -n 5 -np 1 \
  --tokenizer-dir "$tokdir" --anchor-spacing 256 --end-anchor off --resident-gb 0.5 \
  --mem-ceiling-gib 3 --mem-peak-gib 3.5 --reserve-slack-gib 0.25 --admin-token sesame \
  2>"$log" &
pid=$!
# shellcheck source=server_url.sh
source "$(dirname "$0")/server_url.sh"
url="$(server_url "$log" "$pid")" || fail "the server did not start"
# Every given start-up line is in the log ($1 names the server in the failure).
expect_start_lines() {
  local what="$1" phase
  shift
  for phase in "$@"; do grep -qF -- "$phase" "$log" || fail "no start-up line '$phase' ($what)"; done
}
expect_start_lines "random weights" "start: loading the tokenizer from" "start: tokenizer ready" \
  "start: making random weights" "start: weights ready" "start: engine ready" "start: ready in" \
  "listening on http://"
props="$(curl -sf "$url/props")" || fail "GET /props"
/usr/bin/env python3 - "$props" <<'PY' || fail "-c / -n did not reach the server: $props"
import json, sys
p = json.loads(sys.argv[1])
d = p["default_generation_settings"]
sys.exit(0 if d["n_ctx"] == 2048 and d["params"]["n_predict"] == 5 else 1)
PY
stats="$(curl -sf "$url/v1/cache/stats")" || fail "GET /v1/cache/stats"
/usr/bin/env python3 - "$stats" <<'PY' || fail "the cache flags did not reach the caches: $stats"
import json, sys
s = json.loads(sys.argv[1])
g = 1 << 30
want = [
    (s["enabled"], True),
    (s["settings"]["anchor_spacing"], 256),
    (s["settings"]["end_anchor"], False),
    (s["settings"]["anchor_budget_bytes"], g // 2),
    (s["store"]["enabled"], False),
    (s["memory"]["ceiling_bytes"], 3 * g),
    (s["memory"]["peak_bytes"], int(3.5 * g)),
    (s["memory"]["slack_bytes"], g // 4),
]
bad = [w for w in want if w[0] != w[1]]
sys.exit(1 if bad else 0)
PY
# The request line: the cache split, "no session" without a key, a hash with one, and never the
# prompt or the key.
# (The line may be written just after the response: wait for it, boundedly.)
wait_log() { for _ in $(seq 1 100); do grep -qE -- "$1" "$log" && return 0; sleep 0.1; done; return 1; }
json=(-H 'Content-Type: application/json')
curl -sf "${json[@]}" -d '{"prompt": "zebra-canary-17", "max_tokens": 2}' "$url/v1/completions" \
  >/dev/null || fail "a completion failed"
wait_log 'request [0-9a-f]{16}: session no session, prompt [0-9]+ \(cached 0, reread [0-9]+, [a-z_]+/[a-z_]+, (exact|not exact)' \
  || fail "no request line with the cache split and 'no session'"
curl -sf "${json[@]}" -H 'X-Session-Id: key-canary-23' \
  -d '{"prompt": "zebra-canary-17", "max_tokens": 2}' "$url/v1/completions" >/dev/null \
  || fail "a completion with a session failed"
wait_log 'request [0-9a-f]{16}: session [0-9a-f]{16}, prompt [0-9]+ \(cached [0-9]+, reread [0-9]+, ' \
  || fail "no request line with a session hash"
grep -q "canary" "$log" && fail "client text in the log"
# A POST with no Content-Length at all (curl -X POST without -d) reaches the route with an
# empty body.
code="$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer sesame' "$url/v1/cache/clear")"
[ "$code" = 200 ] || fail "curl -X POST (no body) on /v1/cache/clear answered $code"
code="$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '' "$url/v1/cache/clear")"
[ "$code" = 401 ] || fail "a clear without the admin token answered $code"
code="$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '' -H 'Authorization: Bearer sesame' "$url/v1/cache/clear")"
[ "$code" = 200 ] || fail "a clear with the admin token answered $code"
# One server per port: a second serve on the live one's port fails (exit 1, says why) instead
# of sharing the port through SO_REUSEPORT.
port="${url##*:}"
err="$("$bin" serve --preset tiny --port "$port" --ctx 2048 --threads 1 --tokenizer-dir "$tokdir" \
  --no-cache 2>&1 >/dev/null)"
rc=$?
[ $rc -eq 1 ] || fail "a second server on port $port exited $rc"
grep -q "in use" <<<"$err" || fail "a second server on port $port did not say the port is in use: $err"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
# A GGUF file with its tokenizer inside: the start prints every phase of its load.
gguf="$(mktemp --suffix=.gguf)"
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$log" "$gguf"' EXIT
"$bin" gguf-random --preset tiny --type q8_0 --tokenizer-dir "$tokdir" --out "$gguf" >/dev/null 2>&1 \
  || fail "gguf-random"
: >"$log"
"$bin" serve --model "$gguf" --port 0 -c 2048 -t 1 --no-cache 2>"$log" &
pid=$!
url="$(server_url "$log" "$pid")" || fail "the server of a GGUF file did not start"
expect_start_lines "a GGUF file" "mapped and parsed in" \
  "start: loading the tokenizer from the model file" "start: tokenizer ready" \
  "start: loading weights from" "start: weights loaded in" "start: engine ready" "start: ready in"
echo "serve_flags: 6 passed, 0 failed"
