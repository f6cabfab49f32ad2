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
# shellcheck source=crash_test_lib.sh
source "$(dirname "$0")/crash_test_lib.sh"
# --no-suffix-store: the crash points counted are the tier's files only (the suffix store writes at start-up).
serve_flags=(--disk-cache "$work/root" --disk-min-tokens 256 --no-suffix-store)

python3 - >"$work/body.json" <<'PY'
import json
system = " ".join(f"tool{i} reads files and reports what it found." for i in range(450))
print(json.dumps({"model": "m", "max_tokens": 4, "temperature": 0, "logprobs": True,
                  "top_logprobs": 2,
                  "messages": [{"role": "system", "content": system},
                               {"role": "user", "content": "list the files"}]}))
PY

ask() {  # ask <session> -> the response body on stdout
  curl -s -m 120 "$url/v1/chat/completions" -H 'content-type: application/json' \
    -H "x-session-id: $1" -d @"$work/body.json"
}

start "$work/serve.log" ANCHORAGE_DISK_CACHE=off
want="$(ask ref | choices)" || fail "the reference request failed"
stop

for point in $crash_points; do
  for k in $crash_times; do
    rm -rf "$work/root"
    start "$work/serve.log" "ANCHORAGE_FS_CRASH_AT=$point:$k"
    ask "s1" >/dev/null || true  # the server may die before it answers
    # It dies at the crash point (the writer runs while the answer decodes) or we kill it.
    reap 5
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
    stop
  done
done
echo "disk crash test: ok"
