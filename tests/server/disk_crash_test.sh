#!/usr/bin/env bash
# Crash safety of the disk tier with real processes (issue 10 §4): `anchorage serve` writes a
# session's head to the disk tier and is SIGKILLed at a crash point of the file seam (the
# ANCHORAGE_FS_CRASH_AT seam: created, appended, synced, renamed, dir_synced, the 1st or 5th
# time), or by us if it got past that point. A server restarted on the same directory then
# finds no `.tmp` file left, counts no corrupt file, and answers the same request exactly as a
# server without the disk tier (choices equal: tokens and logprobs).
# usage: disk_crash_test.sh <anchorage binary> <tokenizer dir>
set -euo pipefail
bin="$1"
tokdir="$2"
work="$(mktemp -d)"
pid=""
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  [ -f "$work/serve.log" ] && tail -5 "$work/serve.log" >&2
  exit 1
}

python3 - >"$work/body.json" <<'PY'
import json
system = " ".join(f"tool{i} reads files and reports what it found." for i in range(450))
print(json.dumps({"model": "m", "max_tokens": 4, "temperature": 0, "logprobs": True,
                  "top_logprobs": 2,
                  "messages": [{"role": "system", "content": system},
                               {"role": "user", "content": "list the files"}]}))
PY

# start <log> [env...]: starts a server (port 0) and sets $pid and $url.
start() {
  local log="$1"
  shift
  # A fresh log: grep must not find the previous server's address in it.
  rm -f "$log"
  env "$@" "$bin" serve --preset tiny --port 0 --ctx 8192 --threads 2 --tokenizer-dir "$tokdir" \
    --disk-cache "$work/root" --disk-min-tokens 256 2>"$log" &
  pid=$!
  url=""
  for _ in $(seq 1 100); do
    url="$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$log" | head -1 || true)"
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || fail "the server exited at start"
    sleep 0.1
  done
  [ -n "$url" ] || fail "the server did not start"
}

ask() {  # ask <session> -> the response body on stdout
  curl -s -m 120 "$url/v1/chat/completions" -H 'content-type: application/json' \
    -H "x-session-id: $1" -d @"$work/body.json"
}

choices() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["choices"]))'; }

start "$work/serve.log" ANCHORAGE_DISK_CACHE=off
want="$(ask ref | choices)" || fail "the reference request failed"
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=""

for point in created appended synced renamed dir_synced; do
  for k in 1 5; do
    rm -rf "$work/root"
    start "$work/serve.log" "ANCHORAGE_FS_CRASH_AT=$point:$k"
    ask "s1" >/dev/null || true  # the server may die before it answers
    # It dies at the crash point (the writer runs while the answer decodes) or we kill it.
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
    start "$work/serve.log"
    tmp="$(find "$work/root" -name '*.tmp' | wc -l)"
    [ "$tmp" -eq 0 ] || fail "$point:$k: .tmp files left after the restart: $(find "$work/root" -name "*.tmp")"
    got="$(ask "s2")"
    [ "$(choices <<<"$got")" = "$want" ] || fail "$point:$k: the answer differs from the reference"
    stats="$(curl -s -m 10 "$url/v1/cache/stats")"
    python3 - "$point:$k" "$got" "$stats" <<'PY' || fail "$point:$k: stats"
import json, sys
where, got, stats = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
d = stats["disk"]
assert d["enabled"], where
assert d["corrupt_files"] == 0 and d["restore_failures"] == 0, (where, d)
print(where, "source", got["usage"]["anchorage"]["cache"]["source"], "anchors", d["anchors"],
      "swept", d["swept_files"])
PY
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=""
  done
done
echo "disk crash test: ok"
