#!/usr/bin/python3
"""Writes nfc_golden.jsonl: inputs and their NFC by Python's unicodedata (an implementation
no one here wrote, of the same Unicode version as our tables), for unicode_nfc_test.cc.
Each line is [input] when NFC leaves the input unchanged, else [input, nfc].

Run from the repository root:  /usr/bin/python3 tests/text/golden/gen_nfc_golden.py
Cases: every code point that NFC may touch (a canonical decomposition, a nonzero combining
class, the second half of a composition, Hangul jamo; every 37th Hangul syllable) alone, in
decomposed form, after 'a' and before two marks; then seeded random mixes of them.
"""
import json
import random
import unicodedata as ud

OUT = "tests/text/golden/nfc_golden.jsonl"


def interesting():
    seconds = set()
    cps = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        d = ud.decomposition(c)
        canonical = d and not d.startswith("<")
        if canonical:
            parts = d.split()
            if len(parts) == 2:
                seconds.add(int(parts[1], 16))
        if canonical or ud.combining(c):
            cps.append(cp)
    cps += sorted(seconds - set(cps))
    cps += list(range(0x1100, 0x1113)) + list(range(0x1161, 0x1176)) + list(range(0x11A8, 0x11C3))
    cps += list(range(0xAC00, 0xD7A4, 37))
    return sorted(set(cps))


def main():
    cps = interesting()
    cases = []
    for cp in cps:
        c = chr(cp)
        cases += [c, ud.normalize("NFD", c), "a" + c, c + "\u0323\u0301"]
    rng = random.Random(15)
    pool = [chr(cp) for cp in cps] + list("aeoAEOnu") + ["\u1100", "\uac00", "\u0301", "\u0323"]
    for _ in range(4000):
        cases.append("".join(rng.choice(pool) for _ in range(rng.randint(2, 6))))
    with open(OUT, "w", encoding="utf-8") as f:
        for s in cases:
            n = ud.normalize("NFC", s)
            f.write(json.dumps([s] if n == s else [s, n], ensure_ascii=False) + "\n")
    print(f"{OUT}: {len(cases)} cases, Unicode {ud.unidata_version}")


if __name__ == "__main__":
    main()
