#!/usr/bin/python3
"""Independent NumPy dequantization of ggml's GGUF block types, written from the block layouts
(docs/gguf.md) and sharing no code with src/kernels/quant.cc. It makes the golden vectors that
tests/kernels/quant_golden_test.cc compares dequantize_row() with, bit for bit:

    quant_ref.py OUT_DIR            write OUT_DIR/<type>.bin for every type
    quant_ref.py OUT_DIR --check    recompute and exit 1 unless every file there agrees

A file holds N random blocks (every code bit random, the f16 scale fields random finite
halves, subnormals included) followed by their N * B values as little-endian f32. Every
product and difference is a float32 NumPy operation, each rounded once, in the order the
layouts state (e.g. (d * sc) * q - (dmin * m)), the order dequantize_row() promises.
"""
import os
import sys

import numpy as np

F32 = np.float32
IQ4 = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113],
               dtype=F32)

# name: (elements per block, bytes per block, byte offsets of f16 fields)
TYPES = {
    "q8_0": (32, 34, [0]),
    "q4_0": (32, 18, [0]),
    "q4_1": (32, 20, [0, 2]),
    "q5_0": (32, 22, [0]),
    "q5_1": (32, 24, [0, 2]),
    "iq4_nl": (32, 18, [0]),
    "q2_k": (256, 84, [80, 82]),
    "q3_k": (256, 110, [108]),
    "q4_k": (256, 144, [0, 2]),
    "q5_k": (256, 176, [0, 2]),
    "q6_k": (256, 210, [208]),
    "iq4_xs": (256, 136, [0]),
}
N_BLOCKS = {32: 64, 256: 16}


def half(b, off):
    """The f16 at byte off of every block, as float32 column [nb, 1]."""
    return b[:, off:off + 2].copy().view(np.float16).astype(F32)


def nibbles32(qs):
    """[nb, 16] bytes -> [nb, 32] codes: element j < 16 low nibble of byte j, j >= 16 high."""
    return np.concatenate([qs & 0xF, qs >> 4], axis=1).astype(np.int32)


def legacy(b, has_min, bits):
    d = half(b, 0)
    m = half(b, 2) if has_min else None
    p = 4 if has_min else 2
    q = nibbles32(b[:, p + (4 if bits == 5 else 0):])
    if bits == 5:
        qh = b[:, p:p + 4].astype(np.uint32)
        word = qh[:, 0] | qh[:, 1] << 8 | qh[:, 2] << 16 | qh[:, 3] << 24
        fifth = (word[:, None] >> np.arange(32, dtype=np.uint32)) & 1
        q = q | (fifth.astype(np.int32) << 4)
    if has_min:
        return q.astype(F32) * d + m
    return (q - (1 << (bits - 1))).astype(F32) * d


def k_scales_mins(s):
    """Q4_K / Q5_K: [nb, 12] packed bytes -> ([nb, 8] scales, [nb, 8] mins)."""
    s = s.astype(np.int32)
    sc = np.zeros((s.shape[0], 8), np.int32)
    mn = np.zeros_like(sc)
    sc[:, :4] = s[:, 0:4] & 63
    mn[:, :4] = s[:, 4:8] & 63
    sc[:, 4:] = (s[:, 8:12] & 0xF) | ((s[:, 0:4] >> 6) << 4)
    mn[:, 4:] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return sc, mn


def q4_k(b):
    d, dmin = half(b, 0), half(b, 2)
    sc, mn = k_scales_mins(b[:, 4:16])
    qs = b[:, 16:144].reshape(-1, 4, 32).astype(np.int32)
    q = np.stack([qs & 0xF, qs >> 4], axis=2).reshape(-1, 8, 32)  # sub-block 2i low, 2i+1 high
    return ((d * sc.astype(F32))[:, :, None] * q.astype(F32)
            - (dmin * mn.astype(F32))[:, :, None]).reshape(-1, 256)


def q5_k(b):
    d, dmin = half(b, 0), half(b, 2)
    sc, mn = k_scales_mins(b[:, 4:16])
    qh = b[:, 16:48].astype(np.int32)  # [nb, 32]
    qs = b[:, 48:176].reshape(-1, 4, 32).astype(np.int32)
    q = np.stack([qs & 0xF, qs >> 4], axis=2).reshape(-1, 8, 32)
    fifth = (qh[:, None, :] >> np.arange(8)[None, :, None]) & 1
    q = q + 16 * fifth
    return ((d * sc.astype(F32))[:, :, None] * q.astype(F32)
            - (dmin * mn.astype(F32))[:, :, None]).reshape(-1, 256)


def q6_k(b):
    d = half(b, 208)
    out = []
    for h in range(2):
        ql = b[:, 64 * h:64 * h + 64].astype(np.int32)
        qh = b[:, 128 + 32 * h:128 + 32 * h + 32].astype(np.int32)
        parts = [(ql[:, :32] & 0xF) | ((qh & 3) << 4), (ql[:, 32:] & 0xF) | (((qh >> 2) & 3) << 4),
                 (ql[:, :32] >> 4) | (((qh >> 4) & 3) << 4), (ql[:, 32:] >> 4) | (((qh >> 6) & 3) << 4)]
        out.append(np.concatenate(parts, axis=1) - 32)
    q = np.concatenate(out, axis=1).reshape(-1, 16, 16)
    sc = b[:, 192:208].view(np.int8).astype(F32)
    return ((d * sc)[:, :, None] * q.astype(F32)).reshape(-1, 256)


def two_bit_codes(qs):
    """[nb, 64] -> [nb, 256]: element 128h + 32s + l is bits 2s.. of qs[32h + l]."""
    qs = qs.astype(np.int32).reshape(-1, 2, 1, 32)
    return ((qs >> (2 * np.arange(4))[None, None, :, None]) & 3).reshape(-1, 256)


def q2_k(b):
    sc = b[:, 0:16].astype(np.int32)
    d, dmin = half(b, 80), half(b, 82)
    q = two_bit_codes(b[:, 16:80]).reshape(-1, 16, 16)
    return ((d * (sc & 0xF).astype(F32))[:, :, None] * q.astype(F32)
            - (dmin * (sc >> 4).astype(F32))[:, :, None]).reshape(-1, 256)


def q3_k(b):
    hm = b[:, 0:32].astype(np.int32).reshape(-1, 1, 1, 32)
    third = ((hm >> (4 * np.arange(2)[None, :, None, None] + np.arange(4)[None, None, :, None])) & 1)
    q = two_bit_codes(b[:, 32:96]) + 4 * third.reshape(-1, 256) - 4
    s = b[:, 96:108].astype(np.int32)
    low = np.concatenate([s[:, 0:8] & 0xF, s[:, 0:8] >> 4], axis=1)  # scales 0..7, 8..15
    i = np.arange(16)
    high = (s[:, 8 + i % 4] >> (2 * (i // 4))) & 3
    sc = (low | high << 4) - 32
    d = half(b, 108)
    return ((d * sc.astype(F32))[:, :, None] * q.reshape(-1, 16, 16).astype(F32)).reshape(-1, 256)


def iq4_nl(b):
    return half(b, 0) * IQ4[nibbles32(b[:, 2:18])]


def iq4_xs(b):
    d = half(b, 0)
    sh = b[:, 2].astype(np.int32) | b[:, 3].astype(np.int32) << 8
    sl = b[:, 4:8].astype(np.int32)
    j = np.arange(8)
    ls = ((sl[:, j // 2] >> (4 * (j % 2))) & 0xF) | (((sh[:, None] >> (2 * j)) & 3) << 4)
    dl = d * (ls - 32).astype(F32)  # [nb, 8]
    codes = np.concatenate([nibbles32(b[:, 8 + 16 * k:24 + 16 * k])[:, None, :] for k in range(8)],
                           axis=1)
    return (dl[:, :, None] * IQ4[codes]).reshape(-1, 256)


def q8_0(b):
    return b[:, 2:34].view(np.int8).astype(F32) * half(b, 0)


DEQUANT = {
    "q8_0": q8_0, "q4_0": lambda b: legacy(b, False, 4), "q4_1": lambda b: legacy(b, True, 4),
    "q5_0": lambda b: legacy(b, False, 5), "q5_1": lambda b: legacy(b, True, 5),
    "iq4_nl": iq4_nl, "q2_k": q2_k, "q3_k": q3_k, "q4_k": q4_k, "q5_k": q5_k, "q6_k": q6_k,
    "iq4_xs": iq4_xs,
}


def random_blocks(name, seed):
    be, bb, halves = TYPES[name]
    rng = np.random.default_rng(seed)
    b = rng.integers(0, 256, size=(N_BLOCKS[be], bb), dtype=np.uint8)
    for off in halves:
        # Finite halves of both signs, magnitudes 2^-26 .. 2^2 (subnormals included).
        v = (rng.uniform(-1, 1, size=N_BLOCKS[be]) * 2.0 ** rng.integers(-25, 3, N_BLOCKS[be]))
        b[:, off:off + 2] = v.astype(np.float16).view(np.uint8).reshape(-1, 2)
    return b


def golden(name, seed):
    b = random_blocks(name, seed)
    y = DEQUANT[name](b).astype(F32)
    assert y.shape == (b.shape[0], TYPES[name][0])
    return b.tobytes() + y.astype("<f4").tobytes()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out, check = sys.argv[1], "--check" in sys.argv[2:]
    bad = 0
    for seed, name in enumerate(TYPES):
        data = golden(name, 1000 + seed)
        path = os.path.join(out, name + ".bin")
        if check:
            with open(path, "rb") as f:
                if f.read() != data:
                    print("MISMATCH", path)
                    bad += 1
        else:
            with open(path, "wb") as f:
                f.write(data)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
