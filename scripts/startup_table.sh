#!/bin/bash
# Start-up against reading the file once (issue 14 §2), docs/performance.md "Start-up":
# for each GGUF file and each start, the page cache is dropped, the file read cold with `cat`,
# the cache dropped again, then `anchorage serve --model FILE --no-cache` started and its start-up
# log's phases read (docs/http-api.md "Logs"). One line per start. Needs root (drop_caches).
# packed_s: the background packing's own time, from the weights' load to the last panel (the
# server waits for that line, up to 30 s; "-" for a binary that packs before it is ready).
# With --first-request, first_s: from the launch to the end of a first /v1/completions answer
# (16 greedy tokens), sent as soon as the server listens: what a client waiting on a start sees.
#
#     scripts/startup_table.sh [--starts N] [--bin build/anchorage] [--first-request] FILE.gguf...
set -euo pipefail
starts=3
bin=build/anchorage
first=0
files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --starts) starts=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --first-request) first=1; shift ;;
    *) files+=("$1"); shift ;;
  esac
done
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
port=$((18000 + RANDOM % 2000))
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf "%-28s %7s  %6s %6s  %8s %9s %7s %8s %7s\n" file MB cat_s ready_s ratio weights_s tok_s \
  packed_s first_s
for f in "${files[@]}"; do
  mb=$(( $(stat -c %s "$f") / 1000000 ))
  for _ in $(seq "$starts"); do
    drop
    t0=$(date +%s.%N); cat "$f" > /dev/null; t1=$(date +%s.%N)
    drop
    t_launch=$(date +%s.%N)
    "$bin" serve --model "$f" --no-cache --port "$port" > "$log" 2>&1 &
    pid=$!
    first_s=-
    if [ "$first" = 1 ]; then
      for _ in $(seq 6000); do grep -q "listening on" "$log" && break; sleep 0.005; done
      curl -sf -H 'Content-Type: application/json' \
        -d '{"prompt": "Once upon a time", "max_tokens": 16, "temperature": 0}' \
        "http://127.0.0.1:$port/v1/completions" > /dev/null || echo "$f: the first request failed" >&2
      first_s=$(echo "$(date +%s.%N) - $t_launch" | bc -l)
      first_s=$(printf "%.3f" "$first_s")
    fi
    for _ in $(seq 600); do grep -q "start: ready in" "$log" && break; sleep 0.05; done
    if grep -q "left in the file" "$log"; then
      for _ in $(seq 600); do grep -q "weights packed in the background" "$log" && break; sleep 0.05; done
    fi
    kill "$pid" 2>/dev/null || true
    wait "$pid" || true
    grep -q "start: ready in" "$log" || { echo "$f: no start-up line (see the server's log)" >&2; exit 1; }
    ready=$(sed -n 's/.*start: ready in \([0-9.]*\) s.*/\1/p' "$log")
    weights=$(sed -n 's/.*start: weights loaded in \([0-9.]*\) s.*/\1/p' "$log")
    tok=$(sed -n 's/.*start: tokenizer ready .* in \([0-9.]*\) s.*/\1/p' "$log")
    packed=$(sed -n 's/.*weights packed in the background in \([0-9.]*\) s.*/\1/p' "$log")
    cat_s=$(echo "$t1 - $t0" | bc -l)
    printf "%-28s %7d  %6.3f %6.2f  %8.2f %9s %7s %8s %7s\n" "$(basename "$f")" "$mb" "$cat_s" \
      "$ready" "$(echo "$ready / $cat_s" | bc -l)" "$weights" "$tok" "${packed:--}" "$first_s"
  done
done
