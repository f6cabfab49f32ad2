#!/bin/bash
# Start-up against reading the file once (issue 14 §2), docs/performance.md "Start-up":
# for each GGUF file and each start, the page cache is dropped, the file read cold with `cat`,
# the cache dropped again, then `anchorage serve --model FILE --no-cache` started and its start-up
# log's phases read (docs/http-api.md "Logs"). One line per start. Needs root (drop_caches).
# launch_s: from the launch to the "start: ready" line, stamped outside the process (ratio is
# launch_s / cat_s); ready_s: the log's own "ready in", from the serve command's first line.
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
printf "%-28s %7s  %6s %8s %6s  %8s %9s %7s %8s %7s\n" file MB cat_s launch_s ready_s ratio \
  weights_s tok_s packed_s first_s
for f in "${files[@]}"; do
  mb=$(( $(stat -c %s "$f") / 1000000 ))
  for _ in $(seq "$starts"); do
    drop
    t0=$EPOCHREALTIME; cat "$f" > /dev/null; t1=$EPOCHREALTIME
    drop
    # Each log line stamped as it is read ($EPOCHREALTIME: no fork), so launch_s counts what the
    # log's own "ready in" does not: the exec, the dynamic loader and static initialisation.
    t_launch=$EPOCHREALTIME
    "$bin" serve --model "$f" --no-cache --port "$port" 2>&1 |
      while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done > "$log" &
    pipeline=$!
    first_s=-
    if [ "$first" = 1 ]; then
      for _ in $(seq 6000); do grep -q "listening on" "$log" && break; sleep 0.005; done
      curl -sf -H 'Content-Type: application/json' \
        -d '{"prompt": "Once upon a time", "max_tokens": 16, "temperature": 0}' \
        "http://127.0.0.1:$port/v1/completions" > /dev/null || echo "$f: the first request failed" >&2
      first_s=$(echo "$EPOCHREALTIME - $t_launch" | bc -l)
      first_s=$(printf "%.3f" "$first_s")
    fi
    for _ in $(seq 600); do grep -q "start: ready in" "$log" && break; sleep 0.05; done
    if grep -q "left in the file" "$log"; then
      for _ in $(seq 600); do grep -q "weights packed in the background" "$log" && break; sleep 0.05; done
    fi
    pkill -f -- "serve --model $f --no-cache --port $port" 2>/dev/null || true
    wait "$pipeline" || true
    grep -q "start: ready in" "$log" || { echo "$f: no start-up line (see the server's log)" >&2; exit 1; }
    ready=$(sed -n 's/.*start: ready in \([0-9.]*\) s.*/\1/p' "$log")
    weights=$(sed -n 's/.*start: weights loaded in \([0-9.]*\) s.*/\1/p' "$log")
    tok=$(sed -n 's/.*start: tokenizer ready .* in \([0-9.]*\) s.*/\1/p' "$log")
    packed=$(sed -n 's/.*weights packed in the background in \([0-9.]*\) s.*/\1/p' "$log")
    t_ready=$(sed -n 's/^\([0-9.]*\) .*start: ready in.*/\1/p' "$log")
    launch_s=$(echo "$t_ready - $t_launch" | bc -l)
    cat_s=$(echo "$t1 - $t0" | bc -l)
    printf "%-28s %7d  %6.3f %8.3f %6.2f  %8.2f %9s %7s %8s %7s\n" "$(basename "$f")" "$mb" \
      "$cat_s" "$launch_s" "$ready" "$(echo "$launch_s / $cat_s" | bc -l)" "$weights" "$tok" \
      "${packed:--}" "$first_s"
  done
done
