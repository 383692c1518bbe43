"""The Transformer layer of docs/EXAMPLES.md ("transformer_layer") in NumPy on one process: the
reference that the shardmm layer (transformer_layer.py, apps/examples/transformer_layer) and the
PyTorch layer (transformer_layer_torch.py) are checked against, with the inputs, the bf16
rounding and the error bounds they share.

    python3 python/examples/layer_reference.py --check-saved DIR [--dtype f32|bf16]

checks a directory of .npy files written by `transformer_layer --save DIR` (the inputs and
every output): it recomputes the layer from the saved inputs in float64 and prints, per output,
the normwise relative error ||got - want||_F / ||want||_F against the bound for the dtype;
exit 3 when one is above it.

The layer (pre-norm free, no biases; N sequences of S tokens, T = N S rows, H heads of
width dh = D / H, causal attention):

    q, k, v = x Wq, x Wk, x Wv              per sequence n and head h:
    P = softmax(q_nh k_nh^T / sqrt(dh) + causal mask),   o_nh = P v_nh
    x1 = x + o Wo,   y = x1 + GeLU(x1 W1) W2

and its backward pass for a given dy = dL/dy: dx and the gradients of Wq, Wk, Wv, Wo, W1, W2.
"""

import argparse
import os
import sys

import numpy as np

C0, A0 = 0.7978845608028654, 0.044715  # GeLU, tanh approximation: sqrt(2/pi), 0.044715
WEIGHTS = ("Wq", "Wk", "Wv", "Wo", "W1", "W2")
INPUTS = ("x",) + WEIGHTS + ("dy",)
OUTPUTS = ("y", "dx") + tuple("d" + w for w in WEIGHTS)
# Normwise relative error bound per output, c u with u the storage format's unit roundoff
# (docs/EXAMPLES.md, "transformer_layer", "Error bound").
UNIT_ROUNDOFF = {"f64": 2.0**-53, "f32": 2.0**-24, "bf16": 2.0**-8}
BOUNDS = {k: (8 if k == "bf16" else 32) * u for k, u in UNIT_ROUNDOFF.items()}


def gelu(h):
    return 0.5 * h * (1 + np.tanh(C0 * (h + A0 * h**3)))


def gelu_grad(h):
    t = np.tanh(C0 * (h + A0 * h**3))
    return 0.5 * (1 + t) + 0.5 * h * (1 - t * t) * C0 * (1 + 3 * A0 * h * h)


def to_bf16(a):
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32: the
    storage format of the bf16 layer. (NaN and inf do not occur here.)"""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    r = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return r.view(np.float32).reshape(np.shape(a))


def inputs(N, S, D, F, dtype="f64", seed=0):
    """x, the weights and dy: the same global arrays on every rank (a fixed seed). Weights are
    scaled by 1/sqrt(fan-in); in bf16 every value is a bf16 number."""
    rng = np.random.default_rng(seed)
    T = N * S
    shapes = {"x": (T, D), "Wq": (D, D), "Wk": (D, D), "Wv": (D, D), "Wo": (D, D),
              "W1": (D, F), "W2": (F, D), "dy": (T, D)}
    g = {}
    for name in INPUTS:
        scale = 1.0 if name in ("x", "dy") else 1 / np.sqrt(shapes[name][0])
        g[name] = rng.standard_normal(shapes[name]) * scale
    if dtype == "f64":
        return g
    g = {k: v.astype(np.float32) for k, v in g.items()}
    return {k: to_bf16(v) for k, v in g.items()} if dtype == "bf16" else g


def split_heads(t, N, H):
    """[N S, H dh] -> [N, H, S, dh]."""
    return t.reshape(N, -1, H, t.shape[1] // H).transpose(0, 2, 1, 3)


def merge_heads(t):
    """[N, H, S, dh] -> [N S, H dh]."""
    N, H, S, dh = t.shape
    return t.transpose(0, 2, 1, 3).reshape(N * S, H * dh)


def softmax_causal(s):
    """Row softmax of scores [..., S, S] with key j > query i masked out."""
    S = s.shape[-1]
    s = np.where(np.tri(S, dtype=bool), s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_backward(p, dp):
    """dS from dP for P = softmax(S) (rows): P * (dP - rowsum(dP * P))."""
    return p * (dp - (dp * p).sum(axis=-1, keepdims=True))


def reference(g, N, H):
    """Forward and backward on one process in float64: {y, dx, dWq, ..., dW2}."""
    g = {k: np.asarray(v, dtype=np.float64) for k, v in g.items()}
    x, dy = g["x"], g["dy"]
    dh_ = x.shape[1] // H
    heads = [split_heads(x @ g[w], N, H) for w in ("Wq", "Wk", "Wv")]
    q, k, v = heads
    p = softmax_causal(q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh_))
    o = merge_heads(p @ v)
    x1 = x + o @ g["Wo"]
    h = x1 @ g["W1"]
    a = gelu(h)
    out = {"y": x1 + a @ g["W2"], "dW2": a.T @ dy}
    dhid = (dy @ g["W2"].T) * gelu_grad(h)
    out["dW1"] = x1.T @ dhid
    dx1 = dy + dhid @ g["W1"].T
    out["dWo"] = o.T @ dx1
    do = split_heads(dx1 @ g["Wo"].T, N, H)
    ds = softmax_backward(p, do @ v.transpose(0, 1, 3, 2)) / np.sqrt(dh_)
    grads = {"Wq": merge_heads(ds @ k), "Wk": merge_heads(ds.transpose(0, 1, 3, 2) @ q),
             "Wv": merge_heads(p.transpose(0, 1, 3, 2) @ do)}
    dx = dx1.copy()
    for w, d in grads.items():
        out["d" + w] = x.T @ d
        dx += d @ g[w].T
    out["dx"] = dx
    return out


def rel_errors(got, want):
    """Per output: ||got - want||_F / ||want||_F."""
    return {k: float(np.linalg.norm(np.asarray(got[k], np.float64) - want[k]) /
                     max(np.linalg.norm(want[k]), 1e-300)) for k in want}


def check_saved(folder, dtype, heads, sequences):
    """Compares the .npy files `transformer_layer --save` wrote with the reference."""
    g = {k: np.load(os.path.join(folder, k + ".npy")) for k in INPUTS}
    got = {k: np.load(os.path.join(folder, k + ".npy")) for k in OUTPUTS}
    errors = rel_errors(got, reference(g, sequences, heads))
    bound = BOUNDS[dtype]
    for k, e in errors.items():
        print(f"check: {k:<4} relative error vs NumPy {e:.3e} (bound {bound:g})")
    ok = all(e <= bound for e in errors.values())
    print("check: " + ("PASSED" if ok else "FAILED"))
    return 0 if ok else 3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check-saved", metavar="DIR", required=True,
                    help="folder of x.npy, Wq.npy, ..., y.npy, dx.npy, dWq.npy, ...")
    ap.add_argument("--dtype", choices=sorted(BOUNDS), default="f32",
                    help="the saved layer's dtype: picks the bound")
    ap.add_argument("--heads", type=int, required=True, help="attention heads H")
    ap.add_argument("--sequences", type=int, required=True, help="sequences N (T = N S rows)")
    a = ap.parse_args(argv)
    return check_saved(a.check_saved, a.dtype, a.heads, a.sequences)


if __name__ == "__main__":
    sys.exit(main())
