"""Data-parallel training, pmap style: a two-layer MLP, out = tanh(X W1) W2, fitted by SGD to
a fixed target with the batch sharded over every rank and the weights replicated, checked
step by step against the same training in NumPy on one process. The Python counterpart of
apps/examples/dp_train (docs/EXAMPLES.md).

    mpirun -n 4 python3 python/examples/dp_train.py [--steps 20] [--check]

Layouts: X, T (target), h, a, out, dout, da [N_X,*] (rows: the batch, sharded over x);
W1, W2 and their gradients [I,J] (replicated). The forward and the backward's dout W2^T need
no communication (the contracted dimension is whole on every rank); the weight gradients
a^T dout and X^T dh contract the sharded batch, and gemm's sharding rules all-reduce them over
x: pmap's psum of the gradients. The loss is summed with mpi4py (comm.allreduce).
"""

import argparse
import sys

import numpy as np
from mpi4py import MPI

import shardmm


def problem(N, din, hidden, dout, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, din))
    T = np.sin(X @ rng.standard_normal((din, dout)))  # a smooth target
    W1 = rng.standard_normal((din, hidden)) / np.sqrt(din)
    W2 = rng.standard_normal((hidden, dout)) / np.sqrt(hidden)
    return X, T, W1, W2


def reference(X, T, W1, W2, steps, lr):
    """The same training in NumPy: the losses and the final weights."""
    losses, N = [], X.shape[0]
    for _ in range(steps):
        a = np.tanh(X @ W1)
        diff = a @ W2 - T
        losses.append(float((diff**2).sum() / N))
        dout = 2 * diff / N
        dW2, dh = a.T @ dout, (dout @ W2.T) * (1 - a * a)
        W1, W2 = W1 - lr * (X.T @ dh), W2 - lr * dW2
    return losses, W1, W2


def train(mesh, X, T, W1, W2, steps, lr):
    """SGD on the mesh: the losses (the same on every rank) and the final W1, W2."""
    D_ = shardmm.DistMatrix
    N, hidden, dout = X.shape[0], W1.shape[1], W2.shape[1]
    Xd, Td = D_.from_global(mesh, X, "X[N_X,I]"), D_.from_global(mesh, T, "T[N_X,O]")
    W1d, W2d = D_.from_global(mesh, W1, "W1[I,H]"), D_.from_global(mesh, W2, "W2[H,O]")
    a = D_.empty(mesh, (N, hidden), layout="a[N_X,H]")
    out = D_.empty(mesh, (N, dout), layout="out[N_X,O]")
    da = D_.empty(mesh, (N, hidden), layout="da[N_X,H]")
    dW1, dW2 = D_.empty(mesh, W1.shape, layout="dW1[I,H]"), D_.empty(mesh, W2.shape, layout="dW2[H,O]")
    losses = []
    for _ in range(steps):
        shardmm.gemm(Xd, W1d, a, algorithm="sharded")  # local: h = X W1 on each batch shard
        a.local[...] = np.tanh(a.local)
        shardmm.gemm(a, W2d, out, algorithm="sharded")
        diff = out.local - Td.local  # out becomes dout below
        losses.append(mesh.comm.allreduce(float((diff**2).sum())) / N)
        out.local[...] = 2 * diff / N
        shardmm.gemm(a, out, dW2, transa="T", algorithm="sharded")  # AllReduce over x
        shardmm.gemm(out, W2d, da, transb="T", algorithm="sharded")  # local
        da.local[...] *= 1 - a.local * a.local  # da becomes dh
        shardmm.gemm(Xd, da, dW1, transa="T", algorithm="sharded")  # AllReduce over x
        W1d.local[...] -= lr * dW1.local  # replicated: every rank updates its full copy
        W2d.local[...] -= lr * dW2.local
    return losses, W1d, W2d


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-N", type=int, default=256, help="batch")
    ap.add_argument("--din", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--dout", type=int, default=4)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--check", action="store_true", help="compare with NumPy; exit 3 if off")
    a = ap.parse_args(argv)
    mesh = shardmm.Mesh(shape={"x": MPI.COMM_WORLD.Get_size()})
    X, T, W1, W2 = problem(a.N, a.din, a.hidden, a.dout)
    losses, W1d, W2d = train(mesh, X, T, W1, W2, a.steps, a.lr)
    rank0 = MPI.COMM_WORLD.Get_rank() == 0
    if rank0:
        print(f"mesh {mesh.shape}, batch {a.N}: loss {losses[0]:.4f} -> {losses[-1]:.4f} "
              f"in {a.steps} steps")
    if not a.check:
        return 0
    ref_losses, ref_W1, ref_W2 = reference(X, T, W1, W2, a.steps, a.lr)
    err = max(np.max(np.abs(np.subtract(losses, ref_losses))),
              np.linalg.norm(W1d.gather() - ref_W1) / np.linalg.norm(ref_W1),
              np.linalg.norm(W2d.gather() - ref_W2) / np.linalg.norm(ref_W2))
    ok = err <= 1e-10
    if rank0:
        print(f"check against NumPy: max difference {err:.1e} " + ("ok" if ok else "MISMATCH"))
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
