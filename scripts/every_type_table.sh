#!/bin/bash
# Every weight type in one table, one line per type: decode tok/s with its share of the weights'
# bound and of the all-bytes bound (both from the read bandwidth measured right before and after
# that type's decode), prefill tok/s and its ratio to f32. docs/performance.md's per-type tables
# were made with it:
#
#     ANCHORAGE_ISA=avx512|avx2 scripts/every_type_table.sh [build/bench/engine_bench]
#
# runs the `small` preset's 15 types in one engine_bench run, and
#
#     ANCHORAGE_ISA=avx512|avx2 scripts/every_type_table.sh --model-dir DIR [build/bench/engine_bench]
#
# the published Qwen3.5-0.8B shape instead: one engine_bench run per type on DIR/p08_T.gguf,
# written first by `anchorage gguf-random --preset qwen3.5-0.8b --type T` (random weights, the
# Qwen3 tokenizer inside) when it is not there (~0.25-3.3 GB a file, 9 GB for the 15).
# KV_DTYPE=bf16 (the server's default) instead of f32 K/V rows: the tables so far took f32.
# ROUNDS=N (with --model-dir) runs the 15 types N times round-robin, so each type meets the
# shared host at N moments, and prints each type's medians with the weights share's range: on a
# busy host one run per type moved a share by up to 0.3 from one table to the next.
set -euo pipefail
kv=${KV_DTYPE:-f32}
rounds=${ROUNDS:-1}
model_dir=
if [ "${1:-}" = --model-dir ]; then
  model_dir=$2
  shift 2
fi
bin=${1:-build/bench/engine_bench}
types=f32,f16,bf16,q8_0,q6_k,q5_k,q4_k,iq4_xs,q4_0,q5_0,q4_1,q5_1,iq4_nl,q3_k,q2_k
table='
import json, statistics, sys
runs = [json.loads(line) for line in sys.stdin if line.strip()]
print(runs[0]["isa"], "read bandwidth %.1f GB/s at the start" % runs[0]["read_bandwidth_gb_s"])
by_type = {}  # in first-seen order; a type run N times (ROUNDS) has N entries
for d in runs:
    for r in d["runs"]:
        t = r["weight_dtype"]  # with --model, the file: DIR/p08_T.gguf
        if t.endswith(".gguf"):
            t = t.rsplit("/", 1)[-1][len("p08_"):-len(".gguf")]
        by_type.setdefault(t, []).append(r)
med = lambda rs, f: statistics.median(f(r) for r in rs)
ctx = lambda r: r["contexts"][0]
f32 = med(by_type["f32"], lambda r: ctx(r)["prefill_tok_s"]) if "f32" in by_type else None
for t, rs in by_type.items():
    share = [ctx(r)["decode_over_bound"] for r in rs]
    spread = " [%.2f-%.2f of %d]" % (min(share), max(share), len(rs)) if len(rs) > 1 else ""
    prefill = med(rs, lambda r: ctx(r)["prefill_tok_s"])
    # In brackets: the shares against the summing pass (the tables before 2026-12-07).
    print("%-7s %5.0f MB  decode %6.1f (%.2f / %.2f at %.1f GB/s; [%.2f / %.2f at %.1f])"
          "%s  prefill %5.0f (%.2f)" % (
        t, rs[0]["weight_bytes"] / 1e6, med(rs, lambda r: ctx(r)["decode_tok_s"]),
        statistics.median(share), med(rs, lambda r: ctx(r)["decode_over_bound_all"]),
        med(rs, lambda r: ctx(r)["read_bandwidth_gb_s"]),
        med(rs, lambda r: ctx(r).get("decode_over_sum_bound", float("nan"))),
        med(rs, lambda r: ctx(r).get("decode_over_sum_bound_all", float("nan"))),
        med(rs, lambda r: ctx(r).get("read_sum_gb_s", float("nan"))), spread,
        prefill, prefill / f32 if f32 else float("nan")))
'
if [ -z "$model_dir" ]; then
  "$bin" --contexts 1024 --decode-steps 64 --prefill-repeats 3 --kv-dtype "$kv" --weights "$types" |
    python3 -c "$table"
  exit 0
fi
anchorage=$(dirname "$bin")/../anchorage
for round in $(seq "$rounds"); do
  for t in ${types//,/ }; do
    f="$model_dir/p08_$t.gguf"
    if [ ! -f "$f" ]; then
      "$anchorage" gguf-random --preset qwen3.5-0.8b --type "$t" \
        --tokenizer-dir "$(dirname "$bin")/../data/qwen3" --out "$f" > /dev/null
    fi
    # One JSON document a line: engine_bench prints one per run.
    "$bin" --model "$f" --contexts 1024 --decode-steps 64 --prefill-repeats 1 --kv-dtype "$kv" |
      python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))'
  done
done | python3 -c "$table"
