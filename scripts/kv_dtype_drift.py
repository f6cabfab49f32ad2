#!/usr/bin/env python3
"""Greedy tokens and logprobs of two servers on the same random token-id prompts.

docs/exactness.md ("bf16 vs f32 K/V") was measured with it:

    build/anchorage serve --preset small --port 18081 --kv-dtype f32 --no-cache &
    build/anchorage serve --preset small --port 18082 --kv-dtype bf16 --no-cache &
    scripts/kv_dtype_drift.py 18081 18082 --prompt-tokens 4000

Prints one JSON line per prompt (how many of the generated tokens agree, the largest logprob
difference over those) and a last line with the worst difference. Token ids only: no text.
"""
import argparse
import json
import random
import urllib.request


def ask(port, ids, max_tokens):
    body = json.dumps({"prompt": ids, "max_tokens": max_tokens, "temperature": 0,
                       "logprobs": 1}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", body,
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        lp = json.load(r)["choices"][0]["logprobs"]
    return lp["tokens"], lp["token_logprobs"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port_a", type=int)
    ap.add_argument("port_b", type=int)
    ap.add_argument("--prompt-tokens", type=int, default=4000)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--prompts", type=int, default=3)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    worst = 0.0
    for n in range(a.prompts):
        ids = [rng.randrange(1000, 100000) for _ in range(a.prompt_tokens)]
        (ta, la), (tb, lb) = ask(a.port_a, ids, a.max_tokens), ask(a.port_b, ids, a.max_tokens)
        same = 0
        while same < min(len(ta), len(tb)) and ta[same] == tb[same]:
            same += 1
        diff = max((abs(x - y) for x, y in zip(la[:same], lb[:same])), default=0.0)
        worst = max(worst, diff)
        print(json.dumps({"prompt": n, "tokens_equal_for": same, "of": len(ta),
                          "max_abs_logprob_diff_while_equal": diff}))
    print(json.dumps({"worst": worst}))


if __name__ == "__main__":
    main()
