#!/usr/bin/python3
"""Independent float64 NumPy reference of the Qwen3.5 hybrid forward (docs/model.md
§2-§4), written from the spec in HF conventions: zero-centred RMSNorm1p weights, A_log,
grouped value heads (HF repeat_interleave), depthwise conv weight [C, 1, K] run over the
whole sequence with K-1 zeros of left padding, the query/gate interleave of q_proj.

It shares no code with the C++ model: it reads the .npy files dump_tiny wrote (HF names),
runs the whole token sequence in one causal pass (no state carried between calls, no KV
cache), and compares with the C++ logits of the prefill rows and of the decode steps, and
with the C++ recurrent state (S and the conv tail) after the last token.

    qwen35_ref.py DUMP_DIR               compare; exit 1 on a mismatch
    qwen35_ref.py DUMP_DIR --self-check  run the reference with deliberate bugs (and a perturbed
                                         weight); exit 1 unless EVERY variant is caught

Tolerance (stated): max |Δlogit| <= 1e-4 * max(1, rms of the reference logits), and the same
bound relative to max(1, max |x|) for the states. fp32 C++ vs fp64 NumPy differ by ~1e-6 here.
"""
import json
import os
import sys

import numpy as np

TOL = 1e-4
BUGS = [
    "conv_flip",        # conv taps reversed (w[c][0] on the current token)
    "gate_half",        # q_proj read as [all queries | all gates] instead of per-head pairs
    "kappa_tiled",      # value head h reads key head h mod n_k (GGUF order on HF weights)
    "decay_after",      # delta-rule prediction from the undecayed state
    "norm_plain",       # RMSNorm1p applied as plain w (the +1 forgotten)
    "rope_gptj",        # rotary pairs (2i, 2i+1) instead of NeoX (i, i+R/2)
    "no_q_scale",       # the 1/sqrt(d_k) query scale forgotten
    "ssm_norm_1p",      # the GDN gated norm given a +1 it does not have
    "perturb_A_log",    # one head's A_log changed by 0.05 (a weight-level change)
]


class Weights:
    def __init__(self, d):
        self.d = d
        self.cache = {}

    def __getitem__(self, name):
        if name not in self.cache:
            self.cache[name] = np.load(os.path.join(self.d, name + ".npy")).astype(np.float64)
        return self.cache[name]


def silu(x):
    return x / (1.0 + np.exp(-x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    # §0: log(1 + exp(x)), x itself above 20.
    return np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0))))


def rmsnorm1p(x, w, eps, bug):
    n = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return n * (w if bug == "norm_plain" else 1.0 + w)


def gdn(cfg, W, p, x, bug):
    """§2 on the whole sequence from a zero state. x: [T, H]. Returns out, S, conv tail."""
    T = x.shape[0]
    n_k, n_v = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    d_k, d_v = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"]
    K = cfg["linear_conv_kernel_dim"]
    r = n_v // n_k
    key_dim, value_dim = n_k * d_k, n_v * d_v
    eps = cfg["rms_norm_eps"]
    # §2.2
    qkv = x @ W[p + "in_proj_qkv.weight"].T
    z = x @ W[p + "in_proj_z.weight"].T
    b = x @ W[p + "in_proj_b.weight"].T
    a = x @ W[p + "in_proj_a.weight"].T
    # §2.3: PyTorch conv1d is a cross-correlation; K-1 zeros of left padding.
    w = W[p + "conv1d.weight"][:, 0, :]  # [C, K]
    if bug == "conv_flip":
        w = w[:, ::-1]
    C = qkv.shape[1]
    xp = np.concatenate([np.zeros((K - 1, C)), qkv], axis=0)
    y = np.zeros((T, C))
    for j in range(K):
        y += w[:, j][None, :] * xp[j:j + T]
    y = silu(y)
    tail = xp[T:T + K - 1]  # the last K-1 raw inputs, oldest first
    # §2.4
    q = y[:, :key_dim].reshape(T, n_k, d_k)
    k = y[:, key_dim:2 * key_dim].reshape(T, n_k, d_k)
    v = y[:, 2 * key_dim:].reshape(T, n_v, d_v)
    q = q / np.sqrt(np.sum(q * q, axis=-1, keepdims=True) + 1e-6)
    k = k / np.sqrt(np.sum(k * k, axis=-1, keepdims=True) + 1e-6)
    if bug != "no_q_scale":
        q = q / np.sqrt(d_k)
    # §2.5
    A_log = W[p + "A_log"].copy()
    if bug == "perturb_A_log":
        A_log[0] += 0.05
    beta = sigmoid(b)
    g = -np.exp(A_log)[None, :] * softplus(a + W[p + "dt_bias"][None, :])
    # §2.6: HF repeats each key head r times (grouped order).
    if bug == "kappa_tiled":
        q, k = np.tile(q, (1, r, 1)), np.tile(k, (1, r, 1))
    else:
        q, k = np.repeat(q, r, axis=1), np.repeat(k, r, axis=1)
    # §2.7
    S = np.zeros((n_v, d_k, d_v))
    o = np.zeros((T, n_v, d_v))
    for t in range(T):
        alpha = np.exp(g[t])[:, None, None]
        if bug == "decay_after":
            m = np.einsum("hij,hi->hj", S, k[t])
            S = alpha * S
        else:
            S = alpha * S
            m = np.einsum("hij,hi->hj", S, k[t])
        delta = beta[t][:, None] * (v[t] - m)
        S = S + np.einsum("hi,hj->hij", k[t], delta)
        o[t] = np.einsum("hij,hi->hj", S, q[t])
    # §2.9: plain per-head RMSNorm, then the SiLU gate.
    wn = W[p + "norm.weight"]
    if bug == "ssm_norm_1p":
        wn = 1.0 + wn
    n = o / np.sqrt(np.mean(o * o, axis=-1, keepdims=True) + eps) * wn
    n = n * silu(z.reshape(T, n_v, d_v))
    out = n.reshape(T, value_dim) @ W[p + "out_proj.weight"].T
    return out, S, tail


def rope(x, pos, R, theta, bug):
    """§3.3 on x: [T, heads, D] at absolute positions pos: [T]."""
    half = R // 2
    inv_freq = theta ** (-np.arange(0, R, 2, dtype=np.float64) / R)  # [R/2]
    ang = pos[:, None].astype(np.float64) * inv_freq[None, :]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    out = x.copy()
    if bug == "rope_gptj":
        x1, x2 = x[..., 0:R:2], x[..., 1:R:2]
        out[..., 0:R:2] = x1 * cos - x2 * sin
        out[..., 1:R:2] = x2 * cos + x1 * sin
    else:
        x1, x2 = x[..., :half], x[..., half:R]
        out[..., :half] = x1 * cos - x2 * sin
        out[..., half:R] = x2 * cos + x1 * sin
    return out


def attention(cfg, W, p, x, bug):
    """§3 over the whole sequence (positions 0..T-1), causal."""
    T = x.shape[0]
    n_q, n_kv, D = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    eps = cfg["rms_norm_eps"]
    R = int(D * cfg["partial_rotary_factor"])
    theta = cfg["rope_theta"]
    qg = x @ W[p + "q_proj.weight"].T  # [T, 2 n_q D]
    if bug == "gate_half":
        query = qg[:, :n_q * D].reshape(T, n_q, D)
        gate = qg[:, n_q * D:]
    else:  # §3.1: head h owns qg[2hD : 2hD+2D] = [query | gate]
        qg3 = qg.reshape(T, n_q, 2 * D)
        query = qg3[:, :, :D]
        gate = qg3[:, :, D:].reshape(T, n_q * D)
    k = (x @ W[p + "k_proj.weight"].T).reshape(T, n_kv, D)
    v = (x @ W[p + "v_proj.weight"].T).reshape(T, n_kv, D)
    query = rmsnorm1p(query, W[p + "q_norm.weight"], eps, bug)  # §3.2
    k = rmsnorm1p(k, W[p + "k_norm.weight"], eps, bug)
    pos = np.arange(T)
    query = rope(query, pos, R, theta, bug)
    k = rope(k, pos, R, theta, bug)
    rep = n_q // n_kv  # §3.4: query head h uses KV head h // rep
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = np.einsum("thd,uhd->htu", query, k) / np.sqrt(D)
    s = np.where(np.tril(np.ones((T, T), dtype=bool))[None], s, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    pr = np.exp(s)
    pr = pr / pr.sum(axis=-1, keepdims=True)
    o = np.einsum("htu,uhd->thd", pr, v).reshape(T, n_q * D)
    o = o * sigmoid(gate)
    return o @ W[p + "o_proj.weight"].T


def forward(cfg, tie, W, tokens, bug=None):
    """§4.1. Returns logits [T, V], the GDN states [L_lin, n_v, d_k, d_v], tails [L_lin, K-1, C]."""
    base = "model.language_model."
    eps = cfg["rms_norm_eps"]
    h = W[base + "embed_tokens.weight"][tokens]
    states, tails = [], []
    for l, kind in enumerate(cfg["layer_types"]):
        p = base + "layers.%d." % l
        u = rmsnorm1p(h, W[p + "input_layernorm.weight"], eps, bug)
        if kind == "linear_attention":
            out, S, tail = gdn(cfg, W, p + "linear_attn.", u, bug)
            states.append(S)
            tails.append(tail)
        else:
            out = attention(cfg, W, p + "self_attn.", u, bug)
        h = h + out
        u = rmsnorm1p(h, W[p + "post_attention_layernorm.weight"], eps, bug)
        m = p + "mlp."
        ff = silu(u @ W[m + "gate_proj.weight"].T) * (u @ W[m + "up_proj.weight"].T)
        h = h + ff @ W[m + "down_proj.weight"].T
    h = rmsnorm1p(h, W[base + "norm.weight"], eps, bug)
    head = W[base + "embed_tokens.weight"] if tie else W["lm_head.weight"]
    return h @ head.T, np.stack(states), np.stack(tails)


def mismatch(ref, got):
    """max |Δ| over the bound's scale; <= 1 passes."""
    scale = max(1.0, float(np.sqrt(np.mean(ref * ref))))
    return float(np.max(np.abs(ref - got))) / (TOL * scale)


def state_mismatch(ref, got):
    scale = max(1.0, float(np.max(np.abs(ref))))
    return float(np.max(np.abs(ref - got))) / (TOL * scale)


def compare(d, bug=None):
    top = json.load(open(os.path.join(d, "config.json")))
    cfg = top["text_config"]
    rp = cfg.get("rope_parameters", {})
    cfg["rope_theta"] = rp.get("rope_theta", cfg.get("rope_theta"))
    cfg["partial_rotary_factor"] = rp.get("partial_rotary_factor",
                                          cfg.get("partial_rotary_factor", 0.25))
    W = Weights(d)
    tokens = np.load(os.path.join(d, "tokens.npy")).astype(np.int64)
    got = np.load(os.path.join(d, "logits.npy")).astype(np.float64)
    logits, S, tails = forward(cfg, top["tie_word_embeddings"], W, tokens, bug)
    got_S = np.load(os.path.join(d, "state_S.npy")).astype(np.float64)
    got_conv = np.load(os.path.join(d, "state_conv.npy")).astype(np.float64)
    meta = json.load(open(os.path.join(d, "dump.json")))
    n_pre = meta["prefill_tokens"]
    return {
        "prefill_logits": mismatch(logits[:n_pre], got[:n_pre]),
        "decode_logits": mismatch(logits[n_pre:], got[n_pre:]),
        "gdn_S": state_mismatch(S, got_S),
        "gdn_conv": state_mismatch(tails, got_conv),
    }


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    d = sys.argv[1]
    if "--self-check" in sys.argv[2:]:
        missed = []
        for bug in BUGS:
            r = compare(d, bug)
            worst = max(r.values())
            print("bug %-14s worst mismatch %.3g x tolerance -> %s"
                  % (bug, worst, "caught" if worst > 1.0 else "MISSED"))
            if worst <= 1.0:
                missed.append(bug)
        if missed:
            print("self-check FAILED: the comparison cannot see %s" % ", ".join(missed))
            return 1
        print("self-check ok: every deliberate bug is caught")
        return 0
    r = compare(d)
    for k, v in r.items():
        print("%-15s max |delta| = %.3g x tolerance" % (k, v))
    if max(r.values()) > 1.0:
        print("MISMATCH: the C++ model disagrees with the NumPy reference")
        return 1
    print("ok: C++ logits and states match the float64 reference (tol %g)" % TOL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
