"""The Transformer layer of transformer_layer.py written the way people do without shardmm:
PyTorch (CPU, autograd) with torch.distributed (gloo), Megatron-style tensor parallelism over
the model axis and data parallelism over the data axis, on the same ranks and split.

    mpirun -n 4 python3 python/examples/transformer_layer_torch.py --mesh 2x2 [--dtype bf16]
        [--steps 10] [--load DIR] [--json FILE]

Rank r is (data x, model y) = divmod(r, Y). Each rank holds its sequences of x and dy (N / X
of them) and its slices of the weights: Wq, Wk, Wv by columns and Wo by rows (H / Y whole
heads), W1 by columns and W2 by rows (a slice of F). Megatron's two operators carry the tensor
parallel communication: `copy_to_model` (identity forward, AllReduce over the model group
backward) before the column-parallel products, `reduce_from_model` (AllReduce forward,
identity backward) after the row-parallel ones; after backward every weight gradient is
all-reduced over the data group (DistributedDataParallel's job, done by hand here). gloo in
torch 1.13 has no bf16 AllReduce: bf16 tensors are reduced in f32 (as shardmm's bf16 partial
sums are) and rounded back.

--load DIR reads the inputs that `transformer_layer --save DIR` (the C++ example) wrote, and
compares this layer's y, dx and weight gradients with the C++ outputs there and with the NumPy
reference; exit 3 when one is off (docs/EXAMPLES.md states the bounds).
"""

import argparse
import json
import os
import socket
import statistics
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as nnf
from mpi4py import MPI

import layer_reference as ref

WORLD = MPI.COMM_WORLD
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f64": torch.float64}


def all_reduce(t, group, size):
    """Sum of t over `group` (gloo: bf16 goes as f32)."""
    if size == 1:
        return t
    wide = t.float() if t.dtype == torch.bfloat16 else t.clone()
    dist.all_reduce(wide, group=group)
    return wide.to(t.dtype)


class CopyToModel(torch.autograd.Function):
    """Megatron's f: identity forward, AllReduce over the model group backward."""

    @staticmethod
    def forward(ctx, x, mesh):
        ctx.mesh = mesh
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return all_reduce(grad, ctx.mesh.tp, ctx.mesh.Y), None


class ReduceFromModel(torch.autograd.Function):
    """Megatron's g: AllReduce over the model group forward, identity backward."""

    @staticmethod
    def forward(ctx, x, mesh):
        return all_reduce(x, mesh.tp, mesh.Y)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class TorchMesh:
    """The process groups: tp = this rank's model-axis group, dp = its data-axis group."""

    def __init__(self, X, Y):
        rank, size = WORLD.Get_rank(), WORLD.Get_size()
        if X * Y != size:
            raise ValueError(f"mesh {X}x{Y} needs {X * Y} ranks, not {size}")
        port = None
        if rank == 0:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        port = WORLD.bcast(port)
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=size)
        self.X, self.Y = X, Y
        self.x, self.y = divmod(rank, Y)
        # every rank makes every group, in the same order
        tp = [dist.new_group([x * Y + j for j in range(Y)]) for x in range(X)]
        dp = [dist.new_group([i * Y + y for i in range(X)]) for y in range(Y)]
        self.tp, self.dp = tp[self.x], dp[self.y]


def chunk(n, parts, i):
    """Rows/columns of part i when n splits into `parts` blocks of ceil(n / parts)."""
    nb = -(-n // parts)
    return slice(min(n, i * nb), min(n, (i + 1) * nb))


class TorchLayer:
    def __init__(self, mesh, g, N, H, dtype):
        T, D = g["x"].shape
        F = g["W1"].shape[1]
        if N % mesh.X or H % mesh.Y or D % H:
            raise ValueError("need N % X == 0, H % Y == 0 and D % H == 0")
        self.mesh, self.H, self.dh = mesh, H, D // H
        self.rows, self.e, self.f = chunk(T, mesh.X, mesh.x), chunk(D, mesh.Y, mesh.y), \
            chunk(F, mesh.Y, mesh.y)
        cut = {"Wq": (slice(None), self.e), "Wk": (slice(None), self.e),
               "Wv": (slice(None), self.e), "Wo": (self.e, slice(None)),
               "W1": (slice(None), self.f), "W2": (self.f, slice(None))}
        t = lambda a: torch.tensor(np.ascontiguousarray(a), dtype=DTYPES[dtype])  # noqa: E731
        self.W = {k: t(g[k][c]).requires_grad_() for k, c in cut.items()}
        self.cut = cut
        self.x, self.dy = t(g["x"][self.rows]), t(g["dy"][self.rows])

    def heads(self, t):
        return t.view(-1, self.S, t.shape[1] // self.dh, self.dh).transpose(1, 2)

    def forward(self, x):
        W, mesh = self.W, self.mesh
        xin = CopyToModel.apply(x, mesh)
        q, k, v = (self.heads(xin @ W[w]) for w in ("Wq", "Wk", "Wv"))
        s = q @ k.transpose(-1, -2) / self.dh**0.5
        mask = torch.ones(self.S, self.S, dtype=torch.bool).tril()
        p = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        o = (p @ v).transpose(1, 2).reshape(x.shape[0], -1)
        x1 = x + ReduceFromModel.apply(o @ W["Wo"], mesh)
        a = nnf.gelu(CopyToModel.apply(x1, mesh) @ W["W1"], approximate="tanh")
        return x1 + ReduceFromModel.apply(a @ W["W2"], mesh)

    def step(self, S):
        """Forward, backward with dL/dy = dy, data-parallel gradient AllReduce: (y, dx)."""
        self.S = S
        for w in self.W.values():
            w.grad = None
        x = self.x.clone().requires_grad_()
        y = self.forward(x)
        y.backward(self.dy)
        for w in self.W.values():
            w.grad = all_reduce(w.grad, self.mesh.dp, self.mesh.X)
        return y.detach(), x.grad

    def gathered(self, y, dx, shapes):
        """The global outputs on every rank (each block from one replica, summed over ranks)."""
        mesh, parts = self.mesh, {}
        parts["y"] = (y, (self.rows, slice(None)), mesh.y == 0)
        parts["dx"] = (dx, (self.rows, slice(None)), mesh.y == 0)
        for k, w in self.W.items():
            parts["d" + k] = (w.grad, self.cut[k], mesh.x == 0)
        out = {}
        for k, (t, where, mine) in parts.items():
            full = np.zeros(shapes[k])
            if mine:
                full[where] = t.double().numpy()
            out[k] = WORLD.allreduce(full, op=MPI.SUM)
        return out


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mesh", default=None, help="DATAxMODEL, e.g. 2x2 (default: all on data)")
    ap.add_argument("-N", "--sequences", type=int, default=4, help="sequences (the batch)")
    ap.add_argument("-S", "--seq", type=int, default=8, help="tokens per sequence")
    ap.add_argument("-D", "--dmodel", type=int, default=16, help="model width")
    ap.add_argument("-H", "--heads", type=int, default=4, help="attention heads (D %% H == 0)")
    ap.add_argument("-F", "--dff", type=int, default=32, help="MLP hidden width")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    ap.add_argument("--steps", type=int, default=5, help="timed forward+backward steps (>= 1)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed steps first")
    ap.add_argument("--load", metavar="DIR", help="inputs from DIR/*.npy; compare with its outputs")
    ap.add_argument("--json", metavar="FILE", help="append one JSON record to FILE")
    return ap.parse_args(argv)


def check(layer, y, dx, a):
    """Outputs against the C++ outputs in a.load and the NumPy reference: True when within."""
    g = {k: np.load(os.path.join(a.load, k + ".npy")) for k in ref.INPUTS}
    saved = {k: np.load(os.path.join(a.load, k + ".npy")) for k in ref.OUTPUTS}
    got = layer.gathered(y, dx, {k: v.shape for k, v in saved.items()})
    vs_ref = ref.rel_errors(got, ref.reference(g, a.sequences, a.heads))
    vs_cpp = ref.rel_errors(got, {k: v.astype(np.float64) for k, v in saved.items()})
    bound = ref.BOUNDS[a.dtype]
    ok = all(vs_ref[k] <= bound and vs_cpp[k] <= 2 * bound for k in vs_ref)
    if WORLD.Get_rank() == 0:
        for k in ref.OUTPUTS:
            print(f"torch check: {k:<4} vs NumPy {vs_ref[k]:.3e} (bound {bound:.3g}), vs shardmm "
                  f"C++ {vs_cpp[k]:.3e} (bound {2 * bound:.3g})")
        print("torch check: " + ("PASSED" if ok else "FAILED"))
    return ok


def main(argv=None):
    a = parse(argv)
    a.steps = max(a.steps, 1)
    torch.set_num_threads(1)  # one core per rank, as shardmm's ranks (OPENBLAS_NUM_THREADS=1)
    P = WORLD.Get_size()
    X, Y = (int(v) for v in a.mesh.split("x")) if a.mesh else (P, 1)
    mesh = TorchMesh(X, Y)
    if a.load:
        g = {k: np.load(os.path.join(a.load, k + ".npy")) for k in ref.INPUTS}
    else:
        g = ref.inputs(a.sequences, a.seq, a.dmodel, a.dff, a.dtype)
    layer = TorchLayer(mesh, g, a.sequences, a.heads, a.dtype)
    S = g["x"].shape[0] // a.sequences
    times = []
    for s in range(a.warmup + a.steps):
        dist.barrier()
        t0 = time.perf_counter()
        y, dx = layer.step(S)
        if s >= a.warmup:
            times.append(time.perf_counter() - t0)
    ms = 1e3 * statistics.median(times) if times else 0.0
    if WORLD.Get_rank() == 0:
        print(f"  {ms:.3f} ms per step (median of {len(times)}), torch {torch.__version__}, "
              f"mesh {X}x{Y}, {a.dtype}")
        if a.json:
            with open(a.json, "a") as f:
                f.write(json.dumps({"example": "transformer_layer_torch", "mesh": f"{X}x{Y}",
                                    "ranks": P, "dtype": a.dtype, "median_step_ms": ms}) + "\n")
    ok = check(layer, y, dx, a) if a.load else True
    dist.destroy_process_group()
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
