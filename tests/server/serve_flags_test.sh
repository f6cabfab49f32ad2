#!/usr/bin/env bash
# `anchorage serve` flags: --help lists every flag with its default, a bad value is a usage
# error (exit 2), ANCHORAGE_<FLAG> environment variables are read (the command line wins), and
# the cache flags reach the caches (a live server's /v1/cache/stats and /v1/cache/clear).
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
            disk-ttl-days disk-admit-after disk-head-anchors disk-min-tokens; do
  grep -qE -- "--$flag <v> .*\(default: " <<<"$help" || fail "--help does not list --$flag"
done
for switch in no-cache end-anchor end-align no-store response-cache; do
  grep -qE -- "--$switch .*\(default: (on|off)\)" <<<"$help" || fail "--help does not list --$switch"
done
grep -q "ANCHORAGE_" <<<"$help" || fail "--help does not mention the environment variables"
for route in "POST /v1/chat/completions" "POST /v1/completions" "GET  /v1/models" "GET  /health" \
             "GET  /metrics" "/v1/cache/stats" "/v1/cache/peek" "/v1/cache/clear"; do
  grep -qF -- "$route" <<<"$help" || fail "--help does not list the route $route"
done

"$bin" serve --queue 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--queue 0 is not a usage error"
"$bin" serve --no-such-flag >/dev/null 2>&1; [ $? -eq 2 ] || fail "an unknown flag is not a usage error"
"$bin" serve --anchor-spacing 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--anchor-spacing 0 is not a usage error"
"$bin" serve --cache-gb -1 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--cache-gb -1 is not a usage error"
"$bin" serve --end-anchor=maybe >/dev/null 2>&1; [ $? -eq 2 ] || fail "--end-anchor=maybe is not a usage error"
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
ANCHORAGE_NO_STORE=on "$bin" serve --preset tiny --port 0 --ctx 2048 --threads 1 \
  --tokenizer-dir "$tokdir" --anchor-spacing 256 --end-anchor off --resident-gb 0.5 \
  --mem-ceiling-gib 3 --mem-peak-gib 3.5 --reserve-slack-gib 0.25 --admin-token sesame \
  2>"$log" &
pid=$!
url=""
for _ in $(seq 1 600); do
  url="$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$log" | head -1)"
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || fail "the server exited"
  sleep 0.1
done
[ -n "$url" ] || fail "the server did not start"
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
echo "serve_flags: 3 passed, 0 failed"
