#!/usr/bin/env bash
# opencode 1.18.33, the real client, against `anchorage serve` (issue 12 §2). In a scratch git
# repo: `opencode run`, two `opencode run -c` follow-ups, a compaction through `opencode serve`'s
# summarize route, one more follow-up, a new session in the same folder, and one in each of two
# other folders. The server runs with --compaction continuation and --compaction-prepare on
# (issue 16; a short idle period and a low length, so the summary is written ahead between steps,
# and stopped there by the next step's requests). Before the compaction the test waits until the
# summary of the conversation in place is written (GET /v1/cache/stats: served.summary_end is the
# resident end anchor). Its request journal (--journal) is then read, and:
#   - every step completed; the compaction was answered from the summary written ahead of the
#     conversation's end anchor (source prepared, nothing read); every other response was exact
#     and served the client's own tokens;
#   - each follow-up resumed at least at the previous main prompt's end (title and summary
#     requests, sent under the same key, did not cost the conversation its rows), and re-read
#     beyond its new tokens at most the previous answer (a sampled answer that re-tokenizes
#     differently parts inside it; the journal says so with a reason);
#   - the turn after the compaction and the new session in the same folder resumed from the
#     shared head (at least 90 % of their prompts cached);
#   - the third folder's session resumed later than the second's: where the second parted from
#     the others (opencode's working-directory line) a branch anchor was taken.
# usage: opencode_e2e_test.sh <anchorage binary> <tokenizer dir> <node_modules of opencode-ai>
set -uo pipefail
bin="$(readlink -f "$1")"
tokdir="$(readlink -f "$2")"
modules="$(cd "$3" 2>/dev/null && pwd)" || { echo "FAIL: no $3 (scripts/deps.sh installs opencode)"; exit 1; }
# On a failure the scratch folder stays for a look (its path is printed); it holds no user text.
failed=0
fail() {
  echo "FAIL: $*"; failed=1
  [ -n "${work:-}" ] && { tail -20 "$work/serve.log"; echo "kept: $work"; }
  exit 1
}

# The binary ships in a platform package (npm may skip the wrapper's postinstall): the AVX2
# build where the CPU has it, the baseline build otherwise.
oc="$modules/opencode-linux-x64/bin/opencode"
grep -qw avx2 /proc/cpuinfo || oc="$modules/opencode-linux-x64-baseline/bin/opencode"
[ -x "$oc" ] || fail "opencode is not installed at $oc (scripts/deps.sh installs it)"

work="$(mktemp -d)"
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; [ -n "${ocpid:-}" ] && kill "$ocpid" 2>/dev/null; [ "$failed" = 1 ] || rm -rf "$work"' EXIT
"$bin" serve --preset tiny --port 0 --ctx 40000 --threads 2 --tokenizer-dir "$tokdir" \
  --journal "$work/journal.jsonl" --disk-cache "$work/disk-cache" --compaction continuation \
  --compaction-prepare on --compaction-idle-s 1 --compaction-min-tokens 4096 \
  2>"$work/serve.log" &
pid=$!
# shellcheck source=server_url.sh
source "$(dirname "$0")/server_url.sh"
url="$(server_url "$work/serve.log" "$pid")" || fail "the server did not start"

# opencode's config (shared/traces/README.md): our server as an openai-compatible provider, a
# small output limit so each step is quick; nothing of the user's home is read or written.
mkdir -p "$work/home"
cat >"$work/config.json" <<JSON
{"autoupdate": false, "share": "disabled", "model": "local/anchorage", "small_model": "local/anchorage",
 "enabled_providers": ["local"],
 "provider": {"local": {"npm": "@ai-sdk/openai-compatible", "name": "anchorage",
   "options": {"baseURL": "$url/v1", "apiKey": "not-a-secret"},
   "models": {"anchorage": {"name": "anchorage", "tool_call": true, "reasoning": true,
                            "limit": {"context": 32768, "output": 16}}}}}}
JSON
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share"
export XDG_CACHE_HOME="$work/home/.cache" XDG_STATE_HOME="$work/home/.local/state"
export OPENCODE_CONFIG="$work/config.json" OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1
export OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1

repo() {  # a scratch git repo with one commit
  mkdir -p "$1" && (cd "$1" && git init -q && printf '# demo\nA tiny repo.\n' >README.md &&
    printf 'print("hi")\n' >hello.py && printf 'notes\n' >notes.txt && git add . &&
    git -c user.email=test@example.invalid -c user.name=test commit -qm init) || fail "git repo $1"
}
step() {  # step NAME DIR ARGS...: one opencode run that must end with a step_finish
  local name="$1" dir="$2"; shift 2; echo "step $name ($(date +%T))"
  (cd "$dir" && timeout 120 "$oc" run --format json "$@") >"$work/$name.json" 2>"$work/$name.err" ||
    { tail -5 "$work/$name.err"; fail "opencode step $name exited $?"; }
  grep -q '"type":"step_finish"' "$work/$name.json" || fail "opencode step $name did not finish"
}
repo "$work/a"; repo "$work/b"; repo "$work/c"
step run1 "$work/a" "list the files here and summarise README.md"
step run2 "$work/a" -c "now show me hello.py"
step run3 "$work/a" -c "and notes.txt"
# The summary of run3's conversation, written while the engine is idle (its own 4,096 tokens at
# most; opencode's compaction asks for as many).
echo "step prepare ($(date +%T))"
prepared=0
for _ in $(seq 1 600); do
  curl -s -m 2 "$url/v1/cache/stats" | /usr/bin/env python3 -c '
import json, sys
s = json.load(sys.stdin)
sys.exit(0 if 0 < s["served"]["summary_end"] == s["resident"]["end_position"] else 1)' &&
    { prepared=1; break; }
  sleep 0.2
done
[ "$prepared" = 1 ] || fail "the summary of the conversation in place was not written ahead"
sid="$(grep -o '"sessionID":"[^"]*"' "$work/run1.json" | head -1 | cut -d'"' -f4)"
[ -n "$sid" ] || fail "no session id in opencode's output"
# The compaction: the API behind /compact, through `opencode serve`.
port=$((20000 + RANDOM % 20000))
(cd "$work/a" && exec "$oc" serve --print-logs --port "$port" >"$work/ocserve.log" 2>&1) &
ocpid=$!
echo "step summarize ($(date +%T))"
ready=0
for _ in $(seq 1 150); do
  curl -s -m 2 -o /dev/null "http://127.0.0.1:$port/session" && { ready=1; break; }
  sleep 0.2
done
[ "$ready" = 1 ] || { tail -30 "$work/ocserve.log"; fail "opencode serve did not answer"; }
out="$(curl -s -m 60 -X POST "http://127.0.0.1:$port/session/$sid/summarize?directory=$work/a" \
  -H 'Content-Type: application/json' -d '{"providerID":"local","modelID":"anchorage"}')"
[ "$out" = "true" ] || { tail -30 "$work/ocserve.log"; fail "summarize answered: $out"; }
kill "$ocpid" 2>/dev/null; wait "$ocpid" 2>/dev/null; ocpid=""
step run4 "$work/a" -c "list the files again please"
step new_same "$work/a" "list the files here and summarise README.md"
step new_b "$work/b" "list the files here and summarise README.md"
step new_c "$work/c" "list the files here and summarise README.md"

/usr/bin/env python3 - "$work/journal.jsonl" <<'PY' || fail "the journal does not show what the caches promise"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
# The compaction (--compaction continuation, docs/compaction.md) is the one request served as
# something else than the client's tokens: the conversation in place plus one turn, answered
# from the summary written ahead at its end anchor. Every other response is exact and the
# client's own.
cont = [l for l in lines if l["served"] == "continuation"]
assert len(cont) == 1 and not cont[0]["exact"], f"expected one continuation: {cont}"
assert cont[0]["source"] == "prepared" and cont[0]["reread"] == 0, cont
bad = [l for l in lines if l not in cont and (not l["exact"] or l["served"] != "client")]
assert not bad, f"responses not exact or not the client's tokens: {bad}"
# Main requests carry the tools (thousands of tokens); titles and summaries are short.
main = [l for l in lines if l["prompt_tokens"] > 3000]
assert len(main) == 7, f"expected 7 main requests, got {len(main)}: {[l['prompt_tokens'] for l in lines]}"
# run1, run2, run3, run4 (after the compaction), new_same, new_b, new_c: the runs' main
# requests in order (opencode sends one per step; a text answer ends the step).
m1, m2, m3, m4, m5, b, c = main[0], main[1], main[2], main[3], main[4], main[5], main[6]
for prev, cur in ((m1, m2), (m2, m3)):
    assert cur["cached"] >= prev["prompt_tokens"], (prev, cur)
    beyond = cur["reread"] - cur["new_tokens"]
    assert beyond <= 16, (cur, "re-read more than the previous answer beyond its new tokens")
    assert beyond <= 0 or cur.get("reason"), cur
# The compaction's served prompt is run3's conversation and the turn.
assert cont[0]["cached"] >= m3["prompt_tokens"] and cont[0]["reread"] < 1000, (cont, m3)
for l in (m4, m5):  # after the compaction; a new session in the same folder
    assert l["cached"] >= 0.9 * l["prompt_tokens"], l
assert 0 < b["cached"] < c["cached"], (b, c, "the third folder did not resume at the branch point")
print(f"opencode_e2e: {len(lines)} requests; follow-ups cached {m2['cached']}, {m3['cached']}; "
      f"compaction {cont[0]['source']}, cached {cont[0]['cached']}, re-read {cont[0]['reread']}; "
      f"after compaction {m4['cached']}/{m4['prompt_tokens']}; folders b {b['cached']}, c {c['cached']}")
PY
echo "opencode_e2e: 1 passed, 0 failed"
