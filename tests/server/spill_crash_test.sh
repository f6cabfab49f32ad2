#!/usr/bin/env bash
# Crash safety of the session spill with real processes (issue 11 §5): `anchorage serve` answers
# a conversation's first turn, gets SIGTERM, and is SIGKILLed at a crash point of the file seam
# while its shutdown drain saves the conversation (the ANCHORAGE_FS_CRASH_AT seam: created,
# appended, synced, renamed, dir_synced, the 1st or 5th time). A server restarted on the same
# directory then finds no `.tmp` file, serves nothing partial (no failed restore: a save the
# crash cut short has no manifest and its files are swept), and answers the conversation's
# next turn exactly as a server without caches (choices equal: tokens and logprobs).
# With `saves`, the same for the saves that are not the drain's, each SIGKILLed at every crash
# point of the spill's own files (ANCHORAGE_FS_CRASH_AT=<point>:<k>:sessions): a displacement by
# another session, the park giving the conversation up, and a store restore clearing it.
# usage: spill_crash_test.sh <anchorage binary> <tokenizer dir> [drain|saves]
set -euo pipefail
bin="$1"
tokdir="$2"
mode="${3:-drain}"
# shellcheck source=crash_test_lib.sh
source "$(dirname "$0")/crash_test_lib.sh"
# The disk tier admits nothing here: every file written is the spill's.
# --no-suffix-store: the crash points counted are the spill's files only (the suffix store writes at start-up).
serve_flags=(--disk-cache "$work/root" --disk-min-tokens 1000000 --no-suffix-store)

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
system = " ".join(f"tool{i} reads files and reports what it found." for i in range(300))
first = {"model": "m", "max_tokens": 4, "temperature": 0, "logprobs": True, "top_logprobs": 2,
         "messages": [{"role": "system", "content": system},
                      {"role": "user", "content": "list the files"}]}
json.dump(first, open(f"{work}/turn1.json", "w"))
# Other conversations, each with a head of its own.
for name, word in (("other1", "tests"), ("third1", "builds")):
    body = dict(first)
    body["messages"] = [{"role": "system", "content": system.replace("files", word)},
                        {"role": "user", "content": f"list the {word}"}]
    json.dump(body, open(f"{work}/{name}.json", "w"))
PY

ask() {  # ask <body file> -> the response body on stdout
  curl -s -m 120 "$url/v1/chat/completions" -H 'content-type: application/json' \
    -H "x-session-id: conv" -d @"$1"
}

# The second turn: the first answer sent back, one more user message.
make_turn2() {
  python3 - "$work" "$1" <<'PY'
import json, sys
work, answer = sys.argv[1], json.loads(sys.argv[2])
body = json.load(open(f"{work}/turn1.json"))
body["messages"].append({"role": "assistant", "content": answer["choices"][0]["message"]["content"]})
body["messages"].append({"role": "user", "content": "now read the first one"})
json.dump(body, open(f"{work}/turn2.json", "w"))
PY
}

# Another second turn: the client sends back an answer of its own, so the next turn parts from
# the rows at the end of the first turn's prefill.
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
body = json.load(open(f"{work}/turn1.json"))
body["messages"].append({"role": "assistant", "content": "the files are a, b and c"})
body["messages"].append({"role": "user", "content": "now read the first one"})
json.dump(body, open(f"{work}/turn2b.json", "w"))
PY

extra="--no-cache" start "$work/serve.log" ANCHORAGE_DISK_CACHE=off
make_turn2 "$(ask "$work/turn1.json")"
want="$(ask "$work/turn2.json" | choices)" || fail "the reference request failed"
want_b="$(ask "$work/turn2b.json" | choices)" || fail "the reference request failed"
stop

# after_crash <where>: a server restarted on the directory finds no .tmp, fails no restore,
# lists at most the one whole entry, and answers the next turn as the reference.
after_crash() {
  start "$work/serve.log"
  tmp="$(find "$work/root" -name '*.tmp' | wc -l)"
  [ "$tmp" -eq 0 ] || fail "$1: .tmp files left after the restart"
  got="$(ask "$work/turn2.json")"
  [ "$(choices <<<"$got")" = "$want" ] || fail "$1: the answer differs from the reference"
  stats="$(curl -s -m 10 "$url/v1/cache/stats")"
  python3 - "$1" "$got" "$stats" <<'PY' || fail "$1: stats"
import json, sys
where, got, stats = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
s = stats["spill"]
assert s["enabled"], where
assert s["restore_failures"] == 0, (where, s)
# Nothing partial: an entry is listed only when the crash came after its manifest.
assert s["entries"] <= 1, (where, s)
print(where, "tier", got["usage"]["anchorage"]["cache"]["tier"], "cached",
      got["usage"]["prompt_tokens_details"]["cached_tokens"], "entries", s["entries"],
      "hits", s["hits"], "swept", s["swept_files"])
PY
  stop
}

if [ "$mode" = saves ]; then
  # ask_as <session> <body file>: a request of another session (its answer on stdout).
  ask_as() {
    curl -s -m 120 "$url/v1/chat/completions" -H 'content-type: application/json' \
      -H "x-session-id: $1" -d @"$2"
  }
  # The requests of each kind of save; the last one makes the server save "conv". The store
  # kind: "other" first, then "conv" in place, then other's next turn resumes from the state
  # store, which clears the rows in place: conv is saved before.
  run_kind() {
    case "$1" in
      eviction)
        ask "$work/turn1.json" >/dev/null
        ask_as other "$work/other1.json" >/dev/null || true
        ;;
      give_up)
        ask "$work/turn1.json" >/dev/null
        ask_as other "$work/other1.json" >/dev/null
        ask_as third "$work/third1.json" >/dev/null || true
        ;;
      store)
        python3 - "$work" "$(ask_as other "$work/other1.json")" <<'PY'
import json, sys
work, answer = sys.argv[1], json.loads(sys.argv[2])
body = json.load(open(f"{work}/other1.json"))
body["messages"].append({"role": "assistant", "content": answer["choices"][0]["message"]["content"]})
body["messages"].append({"role": "user", "content": "now run them"})
json.dump(body, open(f"{work}/other2.json", "w"))
PY
        ask "$work/turn1.json" >/dev/null
        ask_as other "$work/other2.json" >/dev/null || true
        ;;
    esac
  }
  kind_flags() {
    case "$1" in
      eviction) echo "--resident-park-gb 0 --no-store --spill-min-tokens 1024" ;;
      give_up)
        echo "--resident-park-gb 4 --no-store --spill-min-tokens 1000000 --spill-give-up-min-tokens 1024"
        ;;
      store) echo "--resident-park-gb 0 --spill-min-tokens 1000000 --spill-give-up-min-tokens 1024" ;;
    esac
  }
  for kind in eviction give_up store; do
    extra="$(kind_flags "$kind")"
    # Without a crash: the save happens, and after a restart conv's next turn reads it back.
    rm -rf "$work/root"
    start "$work/serve.log"
    run_kind "$kind"
    saves="$(curl -s -m 10 "$url/v1/cache/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["spill"]["saves"])')"
    [ "$saves" -ge 1 ] || fail "$kind: no save"
    stop
    start "$work/serve.log"
    got="$(ask "$work/turn2.json")"
    [ "$(choices <<<"$got")" = "$want" ] || fail "$kind, no crash: the answer differs from the reference"
    python3 -c 'import json,sys; c=json.loads(sys.argv[1])["usage"]["anchorage"]["cache"]; assert c["tier"] == "nvme_spill", c' "$got" ||
      fail "$kind, no crash: the next turn did not come from the spill"
    stop
    for point in $crash_points; do
      for k in $crash_times; do
        rm -rf "$work/root"
        start "$work/serve.log" "ANCHORAGE_FS_CRASH_AT=$point:$k:sessions"
        run_kind "$kind"
        # The save is the first write of the spill's files: the process died in it.
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then fail "$kind $point:$k: the save did not reach the crash point"; fi
        reap 1
        after_crash "$kind $point:$k"
      done
    done
  done
  echo "spill crash test (saves): ok"
  exit 0
fi

for point in $crash_points; do
  for k in $crash_times; do
    rm -rf "$work/root"
    start "$work/serve.log" "ANCHORAGE_FS_CRASH_AT=$point:$k"
    # The seam may kill it before the drain (the disk tier saves its admission counts after a
    # prefill): a crash anywhere is what the restart must survive.
    ask "$work/turn1.json" >/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true  # the drain saves the conversation
    reap 10
    after_crash "$point:$k"
  done
done

# Without a crash the drain's entry comes back: the next turn resumes past the first prompt.
rm -rf "$work/root"
start "$work/serve.log"
ask "$work/turn1.json" >/dev/null
stop
start "$work/serve.log"
got="$(ask "$work/turn2.json")"
[ "$(choices <<<"$got")" = "$want" ] || fail "no crash: the answer differs from the reference"
python3 -c 'import json,sys; g=json.loads(sys.argv[1]); c=g["usage"]["prompt_tokens_details"]["cached_tokens"]; assert c > 2000, c' "$got" ||
  fail "no crash: the next turn did not resume from the read-back conversation"
stop

# After a restart, the turn with the client's own answer resumes from the spill at the end of
# the first turn's prefill (an anchor off the block lines), not at the block line below it.
rm -rf "$work/root"
start "$work/serve.log"
first="$(ask "$work/turn1.json")"
stop
start "$work/serve.log"
got="$(ask "$work/turn2b.json")"
[ "$(choices <<<"$got")" = "$want_b" ] || fail "another answer: the answer differs from the reference"
python3 - "$first" "$got" <<'PY' || fail "another answer: the next turn did not resume at the end of the first prefill"
import json, sys
first, got = json.loads(sys.argv[1]), json.loads(sys.argv[2])
end = first["usage"]["prompt_tokens"]
assert end % 1024 != 0, end
cache = got["usage"]["anchorage"]["cache"]
assert cache["tier"] == "nvme_spill", cache
assert got["usage"]["prompt_tokens_details"]["cached_tokens"] == end, (got["usage"], end)
PY
stop
echo "spill crash test: ok"
