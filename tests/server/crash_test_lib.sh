# What the crash tests with real processes share (disk_crash_test.sh, spill_crash_test.sh):
# a scratch folder removed at exit, a server started on port 0 with the test's flags, stopping
# and SIGKILLing it, and the choices of an answer (tokens and logprobs) to compare.
# Source it after setting `bin`, `tokdir` and the array `serve_flags` (flags after the common
# ones); `extra` may add flags to one start. Sets `work`, and `pid`/`url` per start.
# shellcheck shell=bash
# shellcheck source=server_url.sh
source "$(dirname "${BASH_SOURCE[0]}")/server_url.sh"

# The crash points of the file seam (core/fault_fs.h's ANCHORAGE_FS_CRASH_AT) and the times
# each is reached: the first write of a kind and a later one.
crash_points="created appended synced renamed dir_synced"
crash_times="1 5"

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

# start <log> [env...]: starts a server (port 0) and sets $pid and $url.
start() {
  local log="$1"
  shift
  # A fresh log: grep must not find the previous server's address in it.
  rm -f "$log"
  # shellcheck disable=SC2086  # extra is a list of flags
  env "$@" "$bin" serve --preset tiny --port 0 --ctx 8192 --threads 2 --tokenizer-dir "$tokdir" \
    "${serve_flags[@]}" ${extra:-} 2>"$log" &
  pid=$!
  url="$(server_url "$log" "$pid")" || fail "the server did not start"
}

# stop: a planned stop (SIGTERM) and its end.
stop() {
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
}

# reap <seconds>: waits that long at most for the server to die (at its crash point), then
# SIGKILLs it.
reap() {
  for _ in $(seq 1 $(($1 * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
}

# The choices of a response body on stdin (tokens and logprobs), as one JSON line.
choices() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["choices"]))'; }
