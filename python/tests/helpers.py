"""Helpers of the Python tests (every rank runs every test, collectively)."""

import numpy as np
from mpi4py import MPI

import shardmm

WORLD = MPI.COMM_WORLD
P = WORLD.Get_size()
DTYPES = ("float32", "float64", "complex64", "complex128")


def meshes():
    """Mesh shapes for this many ranks: 1D, near-square 2D, and the 2D transpose."""
    q = shardmm._native.factor_near_square(P, 2)
    shapes = [{"x": P}, {"x": q[0], "y": q[1]}]
    if q[0] != q[1]:
        shapes.append({"x": q[1], "y": q[0]})
    return shapes


def values(shape, dtype, seed):
    """A global array from a fixed seed: the same on every rank."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def assert_close(got, want, scale, dtype):
    """Normwise: ||got - want|| <= 50 eps(dtype) * scale (scale ~ the size of the terms)."""
    eps = np.finfo(np.dtype(dtype)).eps
    err = np.linalg.norm(np.asarray(got, dtype=np.complex128) - want)
    assert err <= 50 * eps * max(scale, 1.0), f"error {err:.3g} > 50 eps x {scale:.3g}"


def same_on_every_rank(text):
    """Every rank's text (an error message): all equal."""
    texts = WORLD.allgather(text)
    assert all(t == texts[0] for t in texts), f"ranks disagree: {texts}"
