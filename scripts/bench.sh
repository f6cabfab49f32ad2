#!/usr/bin/env bash
# Runs every benchmark in bench/ and prints their JSON, one document per program.
# Usage: scripts/bench.sh [build-dir]
set -euo pipefail
build=${1:-build}
for b in "$build"/bench/*_bench; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")" >&2
  "$b" --benchmark_format=json
done
