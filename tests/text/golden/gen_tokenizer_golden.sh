#!/usr/bin/env bash
# Regenerates tokenizer_golden.jsonl (committed) from the reference tokenizers. Needs the
# tokenizer data (scripts/fetch_tokenizer.sh), Debian's python3-jinja2 and npm. The
# reference packages are installed from package.json / package-lock.json into .cache/, so
# the source tree stays clean. Run from anywhere:  tests/text/golden/gen_tokenizer_golden.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
DATA="$ROOT/.cache/tokenizer-qwen3-3.7.2"
WORK="$ROOT/.cache/tokenizer-golden"
TRACES="${ANCHORAGE_TRACES:-$ROOT/../shared/traces/opencode-1.18-capture.jsonl}"

"$ROOT/scripts/fetch_tokenizer.sh"
mkdir -p "$WORK"
cp "$HERE/package.json" "$HERE/gen_tokenizer_golden.mjs" "$WORK/"
if [ -f "$HERE/package-lock.json" ]; then
  cp "$HERE/package-lock.json" "$WORK/"
  (cd "$WORK" && npm ci --silent --no-audit --no-fund)
else
  (cd "$WORK" && npm install --silent --no-audit --no-fund && cp package-lock.json "$HERE/")
fi
/usr/bin/python3 "$HERE/tokenizer_cases.py" "$DATA/tokenizer_config.json" "$TRACES" > "$WORK/cases.jsonl"
node "$WORK/gen_tokenizer_golden.mjs" "$DATA/tokenizer.json" "$DATA/tokenizer_config.json" \
  "$WORK/cases.jsonl" "$HERE/tokenizer_golden.jsonl"
