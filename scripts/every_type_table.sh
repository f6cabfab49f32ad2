#!/bin/bash
# Every weight type of `small` in one engine_bench run, one line per type: decode tok/s with its
# share of the weights' bound and of the all-bytes bound (both from the read bandwidth measured
# right before and after that type's decode), prefill tok/s and its ratio to f32.
# docs/performance.md's per-type tables were made with it:
#
#     ANCHORAGE_ISA=avx512|avx2 scripts/every_type_table.sh [build/bench/engine_bench]
set -euo pipefail
bin=${1:-build/bench/engine_bench}
"$bin" --contexts 1024 --decode-steps 64 --prefill-repeats 3 --kv-dtype f32 \
  --weights f32,f16,bf16,q8_0,q6_k,q5_k,q4_k,iq4_xs,q4_0,q5_0,q4_1,q5_1,iq4_nl,q3_k,q2_k |
  python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["isa"], "read bandwidth %.1f GB/s at the start" % d["read_bandwidth_gb_s"])
f32 = None
for r in d["runs"]:
    c = r["contexts"][0]
    if r["weight_dtype"] == "f32":
        f32 = c["prefill_tok_s"]
    print("%-7s %5.0f MB  decode %6.1f (%.2f / %.2f at %.1f GB/s)  prefill %5.0f (%.2f)" % (
        r["weight_dtype"], r["weight_bytes"] / 1e6, c["decode_tok_s"],
        c["decode_over_bound"], c["decode_over_bound_all"], c["read_bandwidth_gb_s"],
        c["prefill_tok_s"], c["prefill_tok_s"] / f32 if f32 else float("nan")))
'
