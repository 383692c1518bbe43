"""A whole Transformer layer (causal multi-head attention, then the MLP), forward and backward,
data x tensor parallel (Megatron) on a {x: data, y: model} mesh with shardmm, checked against
the NumPy reference (layer_reference.py). The Python counterpart of
apps/examples/transformer_layer (docs/EXAMPLES.md, "transformer_layer").

    mpirun -n 4 python3 python/examples/transformer_layer.py --mesh 2x2 [--dtype bf16] [--verify]

Layouts: x, x1, y, dy, dx1, dx [B_X,D] (the sequences split over the data axis); Wq, Wk, Wv
[D,E_Y] (column-parallel: whole heads per model rank), Wo [E_Y,D] (row-parallel); W1 [D,F_Y],
W2 [F_Y,D]; q, k, v, o and their gradients [B_X,E_Y]; h, a [B_X,F_Y]. Every projection and MLP
product is a shardmm.gemm with algorithm="sharded", whose rules insert the collectives from the
layouts: o Wo and a W2 contract a dimension sharded over Y (AllReduce_Y of the partial sums,
{U_Y}), as do the backward products into dx1 and dx; the weight gradients contract B, sharded
over X (AllReduce_X). The per-head products (scores, P v and their gradients) are rank-local in
this split: head_products() runs them as shardmm.einsum on a mesh of this rank alone. bf16:
every stored tensor is rounded to bf16 (float32 arrays holding bf16 values), products move
their operands as bf16 (wire="bf16") and accumulate in f32, as the C++ example's
DistMatrix<bf16> products do; the head products take the bf16 bit patterns themselves
(shardmm.to_bf16, einsum with dtype="bf16").
"""

import argparse
import json
import sys
import time

import numpy as np
from mpi4py import MPI

import shardmm
from layer_reference import (BOUNDS, OUTPUTS, WEIGHTS, gelu, gelu_grad, inputs, reference,
                             rel_errors, softmax_backward, softmax_causal, to_bf16)

LAYOUTS = {"x": "[B_X,D]", "dy": "[B_X,D]", "Wq": "[D,E_Y]", "Wk": "[D,E_Y]", "Wv": "[D,E_Y]",
           "Wo": "[E_Y,D]", "W1": "[D,F_Y]", "W2": "[F_Y,D]"}
GRAD_LAYOUT = {"d" + w: LAYOUTS[w] for w in WEIGHTS}


# einsum specs of the head products over [n, h, rows, cols] arrays, by (transa, transb)
HEAD_SPECS = {(False, False): "nhqk,nhkd->nhqd", (False, True): "nhqd,nhkd->nhqk",
              (True, False): "nhqk,nhqd->nhkd"}


def head_products(a, b, transb=False, transa=False, alpha=1.0, *, mesh, bf16=False):
    """alpha op(a[n,h]) op(b[n,h]) for every local sequence n and head h (arrays [n, h, r, c]):
    rank-local in this split, so shardmm.einsum on `mesh`, this rank alone (with bf16, on the
    operands' bf16 bit patterns: f32 accumulation, the product rounded to bf16)."""
    spec = HEAD_SPECS[(transa, transb)]
    if bf16:
        out = shardmm.einsum(spec, shardmm.to_bf16(a), shardmm.to_bf16(b), mesh=mesh,
                             dtype="bf16")
        out = shardmm.from_bf16(out)
    else:
        out = shardmm.einsum(spec, a, b, mesh=mesh)
    return out if alpha == 1.0 else alpha * out


class Layer:
    """The layer on one mesh: the inputs as DistMatrix, forward() and backward()."""

    def __init__(self, mesh, g, sequences, heads, dtype):
        self.mesh, self.dtype = mesh, dtype
        X, Y = mesh.shape.get("x", 1), mesh.shape.get("y", 1)
        T, D = g["x"].shape
        if sequences % X or heads % Y or D % heads:
            raise ValueError(f"need sequences ({sequences}) % X ({X}) == 0, heads ({heads}) "
                             f"% Y ({Y}) == 0 and D ({D}) % heads == 0")
        self.n_loc, self.h_loc, self.dh = sequences // X, heads // Y, D // heads
        self.store = to_bf16 if dtype == "bf16" else (lambda t: t)
        self.opts = {"algorithm": "sharded"} | ({"wire": "bf16"} if dtype == "bf16" else {})
        np_dtype = "float64" if dtype == "f64" else "float32"
        self.t = {k: shardmm.DistMatrix.from_global(mesh, g[k], k + LAYOUTS[k], dtype=np_dtype)
                  for k in LAYOUTS}
        self.steps = []  # (name, gemm report) of the last forward + backward
        self.alone = shardmm.Mesh(MPI.COMM_SELF, shape={"r": 1})  # the head products' mesh

    def hp(self, a, b, **kw):
        """head_products on this rank alone, in the layer's format."""
        return head_products(a, b, mesh=self.alone, bf16=self.dtype == "bf16", **kw)

    def mm(self, name, A, B, layout, transa="N", transb="N", C=None, beta=0):
        """C <- op(A) op(B) (+ beta C) through shardmm; C's tile rounded to the storage type."""
        rows = A.shape[1] if transa == "T" else A.shape[0]
        cols = B.shape[0] if transb == "T" else B.shape[1]
        if C is None:
            C = shardmm.DistMatrix.empty(self.mesh, (rows, cols), A.dtype, layout)
        _, report = shardmm.gemm(A, B, C, beta=beta, transa=transa, transb=transb, **self.opts)
        C.local[...] = self.store(C.local)
        self.steps.append((name, report))
        return C

    def like(self, M, values, name):
        """A matrix in M's layout holding `values` (this rank's tile), rounded to storage."""
        C = shardmm.DistMatrix.empty(self.mesh, M.shape, M.dtype, name + M.layout[M.layout.index("["):])
        C.local[...] = self.store(values)
        return C

    def heads(self, M):
        """[B_X,E_Y] tile -> [n_loc, h_loc, S, dh] (a copy)."""
        return np.asarray(M.local).reshape(self.n_loc, -1, self.h_loc, self.dh).transpose(0, 2, 1, 3)

    def merge(self, t, like, name):
        return self.like(like, t.transpose(0, 2, 1, 3).reshape(like.local.shape), name)

    def forward(self):
        t, s = self.t, self.store
        self.steps = []
        for w in ("Wq", "Wk", "Wv"):  # column-parallel: no communication
            t[w[1]] = self.mm(w[1] + " = x " + w, t["x"], t[w], w[1] + "[B_X,E_Y]")
        q, k, v = (self.heads(t[n]) for n in "qkv")
        scores = s(self.hp(q, k, transb=True, alpha=1 / np.sqrt(self.dh)))
        self.p = s(softmax_causal(scores))
        t["o"] = self.merge(s(self.hp(self.p, v)), t["q"], "o")
        attn = self.mm("attn = o Wo", t["o"], t["Wo"], "attn[B_X,D]")  # AllReduce_Y
        t["x1"] = self.like(t["x"], t["x"].local + attn.local, "xone")
        t["h"] = self.mm("h = x1 W1", t["x1"], t["W1"], "h[B_X,F_Y]")
        t["a"] = self.like(t["h"], gelu(t["h"].local), "a")
        mlp = self.mm("m = a W2", t["a"], t["W2"], "m[B_X,D]")  # AllReduce_Y
        t["y"] = self.like(t["x"], t["x1"].local + mlp.local, "y")
        return t["y"]

    def backward(self):
        t, s = self.t, self.store
        t["dW2"] = self.mm("dW2 = a^T dy", t["a"], t["dy"], "dW2" + LAYOUTS["W2"], transa="T")
        da = self.mm("da = dy W2^T", t["dy"], t["W2"], "da[B_X,F_Y]", transb="T")
        dhid = self.like(da, da.local * gelu_grad(t["h"].local), "dhid")
        t["dW1"] = self.mm("dW1 = x1^T dh", t["x1"], dhid, "dW1" + LAYOUTS["W1"], transa="T")
        dx1 = self.mm("dx1 = dh W1^T", dhid, t["W1"], "dxone[B_X,D]", transb="T")  # AllReduce_Y
        dx1.local[...] = s(dx1.local + t["dy"].local)
        t["dWo"] = self.mm("dWo = o^T dx1", t["o"], dx1, "dWo" + LAYOUTS["Wo"], transa="T")
        do = self.heads(self.mm("do = dx1 Wo^T", dx1, t["Wo"], "do[B_X,E_Y]", transb="T"))
        q, k, v = (self.heads(t[n]) for n in "qkv")
        dp = s(self.hp(do, v, transb=True))
        ds = s(softmax_backward(self.p, dp) / np.sqrt(self.dh))
        grads = {"q": self.hp(ds, k), "k": self.hp(ds, q, transa=True),
                 "v": self.hp(self.p, do, transa=True)}
        t["dx"] = self.like(dx1, dx1.local, "dx")
        for n, d in grads.items():
            dn = self.merge(s(d), t["q"], "d" + n)
            w = "W" + n
            t["d" + w] = self.mm(f"d{w} = x^T d{n}", t["x"], dn, "d" + w + LAYOUTS[w], transa="T")
            self.mm(f"dx += d{n} {w}^T", dn, t[w], None, transb="T", C=t["dx"], beta=1)
        return {k: t[k] for k in OUTPUTS}


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mesh", default=None, help="DATAxMODEL, e.g. 2x2 (default: all on data)")
    ap.add_argument("-N", "--sequences", type=int, default=4, help="sequences (the batch)")
    ap.add_argument("-S", "--seq", type=int, default=8, help="tokens per sequence")
    ap.add_argument("-D", "--dmodel", type=int, default=16, help="model width")
    ap.add_argument("-H", "--heads", type=int, default=4, help="attention heads (D %% H == 0)")
    ap.add_argument("-F", "--dff", type=int, default=32, help="MLP hidden width")
    ap.add_argument("--dtype", choices=("f64", "f32", "bf16"), default="f32")
    ap.add_argument("--steps", type=int, default=0, help="timed forward+backward steps")
    ap.add_argument("--verify", action="store_true", help="compare with NumPy; exit 3 if off")
    ap.add_argument("--json", metavar="FILE", help="append the median step time to FILE")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse(argv)
    P, rank0 = MPI.COMM_WORLD.Get_size(), MPI.COMM_WORLD.Get_rank() == 0
    X, Y = (int(v) for v in a.mesh.split("x")) if a.mesh else (P, 1)
    mesh = shardmm.Mesh(shape={"x": X, "y": Y})
    g = inputs(a.sequences, a.seq, a.dmodel, a.dff, a.dtype)
    layer = Layer(mesh, g, a.sequences, a.heads, a.dtype)
    layer.forward()
    out = layer.backward()
    times = []
    for _ in range(a.steps):
        MPI.COMM_WORLD.Barrier()
        t0 = time.perf_counter()
        layer.forward()
        layer.backward()
        times.append(time.perf_counter() - t0)  # rank 0's is reported, as the C++ example does
    if rank0 and times:
        ms = 1e3 * float(np.median(times))
        print(f"  {ms:.3f} ms per step (median of {len(times)}), mesh {X}x{Y}, {a.dtype}")
        if a.json:
            with open(a.json, "a") as f:
                f.write(json.dumps({"example": "transformer_layer.py", "mesh": f"{X}x{Y}",
                                    "ranks": P, "dtype": a.dtype, "median_step_ms": ms}) + "\n")
    if not a.verify:
        return 0
    errors = rel_errors({k: m.gather() for k, m in out.items()}, reference(g, a.sequences, a.heads))
    bound = BOUNDS[a.dtype]
    ok = all(e <= bound for e in errors.values())
    if rank0:
        print(f"verify ({X}x{Y}, {a.dtype}): " + ", ".join(f"{k} {e:.1e}" for k, e in errors.items())
              + (" ok" if ok else f" > {bound:g} MISMATCH"))
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
