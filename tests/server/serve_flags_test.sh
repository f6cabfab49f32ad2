#!/usr/bin/env bash
# `anchorage serve` flags: --help lists every flag with its default, a bad value is a usage
# error (exit 2), and ANCHORAGE_<FLAG> environment variables are read (the command line wins).
# usage: serve_flags_test.sh <anchorage binary>
set -uo pipefail
bin="$1"
fail() { echo "FAIL: $*"; exit 1; }

help="$("$bin" serve --help)" || fail "--help exited $?"
for flag in host port preset seed weight-dtype kv-dtype ctx threads queue max-body-bytes \
            max-tokens http-threads tokenizer-dir model-name; do
  grep -qE -- "--$flag <v> .*\(default: " <<<"$help" || fail "--help does not list --$flag"
done
grep -q "ANCHORAGE_" <<<"$help" || fail "--help does not mention the environment variables"

"$bin" serve --queue 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--queue 0 is not a usage error"
"$bin" serve --no-such-flag >/dev/null 2>&1; [ $? -eq 2 ] || fail "an unknown flag is not a usage error"
# The environment is read: a bad value there is the same usage error...
ANCHORAGE_KV_DTYPE=f64 "$bin" serve >/dev/null 2>&1; [ $? -eq 2 ] || fail "ANCHORAGE_KV_DTYPE not read"
err="$(ANCHORAGE_MAX_BODY_BYTES=0 "$bin" serve 2>&1 >/dev/null)"
grep -q -- "--max-body-bytes" <<<"$err" || fail "ANCHORAGE_MAX_BODY_BYTES not read"
# ...and the command line wins over it (this run then fails later, on the tokenizer path).
ANCHORAGE_QUEUE=0 "$bin" serve --queue 1 --tokenizer-dir /nonexistent >/dev/null 2>&1
[ $? -eq 1 ] || fail "--queue on the command line did not override ANCHORAGE_QUEUE"
echo "serve_flags: 1 passed, 0 failed"
