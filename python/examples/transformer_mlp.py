"""One Transformer MLP block, y = GeLU(x W1) W2, forward and backward, data x tensor parallel
(Megatron) on a {x: data, y: model} mesh, checked against the same block in NumPy on one
process. The Python counterpart of apps/examples/transformer_mlp (docs/EXAMPLES.md).

    mpirun -n 4 python3 python/examples/transformer_mlp.py --mesh 2x2 [--mode seqpar] [--verify]

Layouts: W1 [D,F_Y] (column-sharded over the model axis), W2 [F_Y,D] (row-sharded), h, a, da,
dh [B_X,F_Y]; x, y, dy, dx [B_X,D] (allreduce mode) or [B_XY,D] (seqpar: sequence parallel).
Every product is a shardmm.gemm with algorithm="sharded": the JAX sharding rules insert the
collectives from the layouts (y = a W2 contracts F, sharded over Y: AllReduce_Y, or
ReduceScatter_Y into [B_XY,D]; dW1, dW2 contract B, sharded over X: AllReduce_X). GeLU and its
derivative run on the local tiles (M.local) in NumPy.
"""

import argparse
import sys

import numpy as np
from mpi4py import MPI

import shardmm

C0, A0 = 0.7978845608028654, 0.044715  # GeLU, tanh approximation: sqrt(2/pi), 0.044715


def gelu(h):
    return 0.5 * h * (1 + np.tanh(C0 * (h + A0 * h**3)))


def gelu_grad(h):
    t = np.tanh(C0 * (h + A0 * h**3))
    return 0.5 * (1 + t) + 0.5 * h * (1 - t * t) * C0 * (1 + 3 * A0 * h * h)


def inputs(B, D, F, dtype, seed=0):
    """x, W1, W2, dy: the same global arrays on every rank (a fixed seed)."""
    rng = np.random.default_rng(seed)
    shapes = {"x": (B, D), "W1": (D, F), "W2": (F, D), "dy": (B, D)}
    return {k: (rng.standard_normal(s) / np.sqrt(s[0])).astype(dtype) for k, s in shapes.items()}


def reference(g):
    """The block on one process, in NumPy."""
    h = g["x"] @ g["W1"]
    a = gelu(h)
    da = g["dy"] @ g["W2"].T
    dh = da * gelu_grad(h)
    return {"y": a @ g["W2"], "dx": dh @ g["W1"].T, "dW1": g["x"].T @ dh, "dW2": a.T @ g["dy"]}


def block(mesh, g, mode="allreduce"):
    """Forward and backward on the mesh: (results as DistMatrix, [(step, report)])."""
    act = "[B_X,D]" if mode == "allreduce" else "[B_XY,D]"
    D_ = shardmm.DistMatrix
    x, dy = D_.from_global(mesh, g["x"], "x" + act), D_.from_global(mesh, g["dy"], "dy" + act)
    W1 = D_.from_global(mesh, g["W1"], "W1[D,F_Y]")
    W2 = D_.from_global(mesh, g["W2"], "W2[F_Y,D]")
    B, D, F, dtype = x.shape[0], x.shape[1], W1.shape[1], x.dtype
    steps = []

    def mm(step, A, Bm, layout, shape, **kw):
        C = D_.empty(mesh, shape, dtype, layout)
        _, report = shardmm.gemm(A, Bm, C, algorithm="sharded", **kw)
        steps.append((step, report))
        return C

    if mode == "seqpar":  # AllGather_Y of the activations before the products that need them
        x, dy = x.redistribute("xfull[B_X,D]"), dy.redistribute("dyfull[B_X,D]")
    h = mm("h = x W1", x, W1, "h[B_X,F_Y]", (B, F))
    a = h.redistribute("a[B_X,F_Y]")  # same layout: a local copy
    a.local[...] = gelu(h.local)  # elementwise on the tile
    y = mm("y = a W2", a, W2, "y" + act, (B, D))
    da = mm("da = dy W2^T", dy, W2, "da[B_X,F_Y]", (B, F), transb="T")
    dW2 = mm("dW2 = a^T dy", a, dy, "dW2[F_Y,D]", (F, D), transa="T")
    da.local[...] *= gelu_grad(h.local)  # da becomes dh
    dx = mm("dx = dh W1^T", da, W1, "dx" + act, (B, D), transb="T")
    dW1 = mm("dW1 = x^T dh", x, da, "dW1[D,F_Y]", (D, F), transa="T")
    return {"y": y, "dx": dx, "dW1": dW1, "dW2": dW2}, steps


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mesh", default=None, help="DATAxMODEL, e.g. 2x2 (default: all on data)")
    ap.add_argument("-B", type=int, default=64, help="tokens")
    ap.add_argument("-D", type=int, default=32, help="model width")
    ap.add_argument("-F", type=int, default=128, help="hidden width")
    ap.add_argument("--mode", choices=("allreduce", "seqpar"), default="allreduce")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float64")
    ap.add_argument("--verify", action="store_true", help="compare with NumPy; exit 3 if off")
    a = ap.parse_args(argv)
    P = MPI.COMM_WORLD.Get_size()
    X, Y = (int(v) for v in a.mesh.split("x")) if a.mesh else (P, 1)
    mesh = shardmm.Mesh(shape={"x": X, "y": Y})
    g = inputs(a.B, a.D, a.F, a.dtype)
    out, steps = block(mesh, g, a.mode)
    rank0 = MPI.COMM_WORLD.Get_rank() == 0
    if rank0:
        print(f"mesh {mesh.shape}, B={a.B} D={a.D} F={a.F} {a.dtype}, mode {a.mode}")
        item = np.dtype(a.dtype).itemsize
        for step, r in steps:
            words = r["bytes_received"] // item
            print(f"  {step:<13} rank 0 received {words:>7} words  ({r['detail']})")
    if not a.verify:
        return 0
    want = reference(g)
    tol = 1e-4 if a.dtype == "float32" else 1e-10
    errors = {k: np.linalg.norm(out[k].gather() - want[k]) / np.linalg.norm(want[k]) for k in want}
    ok = all(e <= tol for e in errors.values())
    if rank0:
        print("verify: " + ", ".join(f"{k} {e:.1e}" for k, e in errors.items()) +
              (" ok" if ok else f" > {tol:g} MISMATCH"))
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
