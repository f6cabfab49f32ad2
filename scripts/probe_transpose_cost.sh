#!/bin/bash
# What the byte-interleaved panel layout costs AVX2's one-row (decode) integer-dot paths: the
# committed tree is built twice into temporary directories, once as it is and once with
# transpose4x32_half (src/kernels/gemm_int8_impl.h) reduced to plain
# loads of the same bytes, as they would be if a panel stored each lane's 4 consecutive bytes
# side by side. The probe's results are wrong (timing only); both gemm_bench binaries then run
# the M = 1 case of each type alternately at one thread, AVX2 forced, and the best call of each
# pair is printed (docs/performance.md "AVX-512's Q3_K and Q2_K; what the panel layout costs AVX2").
# Types whose quant bytes are in quads (kernels/panel_layout.h) no longer transpose: not probed.
#
#     scripts/probe_transpose_cost.sh [--pairs N] [--types 'q4_k q6_k ...']
set -euo pipefail
pairs=2
types="q3_k q2_k"
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs=$2; shift 2 ;;
    --types) types=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=scripts/probe_trees.sh
source "$(dirname "$0")/probe_trees.sh"
python3 - "$work/probe/src/kernels/gemm_int8_impl.h" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
half = "ANCHORAGE_FORCE_INLINE void transpose4x32_half(const uint8_t* r0, __m256i* v) {\n"
assert s.count(half) == 1, "transpose helper not found"
load = "_mm256_loadu_si256((const __m256i*)(r0 + %s))"
s = s.replace(half, half + "  if (true) { v[0] = %s; v[1] = %s; return; }\n" % (
    load % "64 * kHigh", load % "32 + 64 * kHigh"))
open(p, "w").write(s)
EOF
for variant in layout probe; do
  { cmake -S "$work/$variant" -B "$work/$variant/build" -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$work/$variant/build" -j2 --target gemm_bench; } > "$work/$variant.log" 2>&1 ||
    { cat "$work/$variant.log" >&2; exit 1; }
done
echo "type pair layout_us probe_us probe/layout  (gemm K512 N2048 M1, 1 thread, AVX2, best call)"
for t in $types; do
  for p in $(seq "$pairs"); do
    us=()
    for variant in layout probe; do
      us+=("$(ANCHORAGE_ISA=avx2 "$work/$variant/build/bench/gemm_bench" \
        --benchmark_filter="gemm/$t/M1/K512/N2048/threads:1" \
        --benchmark_format=json 2> /dev/null |
        python3 -c 'import json, sys; print("%.2f" % json.load(sys.stdin)["benchmarks"][0]["us_per_call_best"])')")
    done
    printf "%-7s %d %8s %8s %6.2f\n" "$t" "$p" "${us[0]}" "${us[1]}" "$(echo "${us[1]} / ${us[0]}" | bc -l)"
  done
done
