#!/bin/bash
# What a K layout in blocks of 32 keys ([block][d][32], each block's rows contiguous) would give
# AVX2's bf16 decode attention at 32k, where K's rows are `capacity` apart today
# (docs/kernels.md "Cache layout"): the committed tree is built twice into temporary
# directories, once as it is and once with the score kernels addressing K as if it were blocked
# (src/kernels/attention_impl.h: block j0 at Kh + j0 * D, row stride 32, prefetch distance times
# D). The probe reads other keys than the query's (wrong scores, timing only). Then, alternating,
# attention_bench's bf16 32k decode case at one and two threads, and engine_bench's decode at
# 32k with bf16 K/V, AVX2 forced (docs/performance.md "Long context with the default bf16 K/V").
#
#     scripts/probe_k_blocks.sh [--pairs N] [--engine-pairs N]
set -euo pipefail
pairs=3
engine_pairs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs=$2; shift 2 ;;
    --engine-pairs) engine_pairs=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=scripts/probe_trees.sh
source "$(dirname "$0")/probe_trees.sh"
python3 - "$work/probe/src/kernels/attention_impl.h" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = """score_rows<kSR>(rows + r_begin, n_rows - r_begin, Kh + j0, cap, D, n_load, job.scale,
                      s + r_begin * kKeyBlock, pf);"""
assert s.count(old) == 1, "score_rows call not found"
s = s.replace(old, """score_rows<kSR>(rows + r_begin, n_rows - r_begin, Kh + j0 * D, kKeyBlock, D, n_load,
                      job.scale, s + r_begin * kKeyBlock, pf * D);""")
open(p, "w").write(s)
PY
for variant in layout probe; do
  { cmake -S "$work/$variant" -B "$work/$variant/build" -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$work/$variant/build" -j2 --target attention_bench engine_bench; } \
    > "$work/$variant.log" 2>&1 || { cat "$work/$variant.log" >&2; exit 1; }
done
echo "attention_bench bf16 ctx 32768 T 1, AVX2: ms a call (kv GB/s)"
for p in $(seq "$pairs"); do
  for variant in layout probe; do
    printf "%-7s %d " "$variant" "$p"
    ANCHORAGE_ISA=avx2 "$work/$variant/build/bench/attention_bench" \
      --benchmark_filter='attention/bf16/ctx:32768/T:1/' --benchmark_format=json 2> /dev/null |
      python3 -c 'import json, sys
b = json.load(sys.stdin)["benchmarks"]
print("  ".join("%s %.2f ms (%.1f)" % (x["name"].split("/")[-2], x["real_time"], x["kv_gbps"]) for x in b))'
  done
done
echo "engine_bench --contexts 32768 --weights q4_k --kv-dtype bf16, AVX2: decode tok/s, all-bytes bound, attention ms a token"
for p in $(seq "$engine_pairs"); do
  for variant in layout probe; do
    printf "%-7s %d " "$variant" "$p"
    ANCHORAGE_ISA=avx2 "$work/$variant/build/bench/engine_bench" --contexts 32768 --weights q4_k \
      --kv-dtype bf16 --decode-steps 64 --prefill-repeats 1 2> /dev/null |
      python3 -c 'import json, sys
c = json.load(sys.stdin)["runs"][0]["contexts"][0]
print("%.1f %.3f %.3f" % (c["decode_tok_s"], c["decode_over_bound_all"], c["decode_profile_ms_per_token"]["attention"]))'
  done
done
