"""Batched products from Python: shardmm.matmul on 3-D (and broadcast, 1-D-promoted) arrays
against numpy.matmul, shardmm.einsum for the Transformer's contractions against numpy.einsum,
float16, the layouts they run in, and the errors (the same on every rank)."""

import numpy as np
import pytest
from helpers import P, assert_close, meshes, same_on_every_rank, values

import shardmm
from shardmm import batched


def scale(a, b):
    """The size of the terms of a @ b (for the normwise bound)."""
    return float(np.linalg.norm(np.abs(a).astype(float)) * np.linalg.norm(np.abs(b).astype(float)))


@pytest.mark.parametrize("shape", meshes())
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("shapes", [((5, 4, 3), (5, 3, 6)), ((2, 1, 4, 3), (3, 3, 2)),
                                    ((4, 3), (7, 3, 5)), ((6, 4, 3), (3, 2)), ((3,), (4, 3, 2)),
                                    ((9, 4, 3), (3,))])
def test_matmul_batched(shape, dtype, shapes):
    mesh = shardmm.Mesh(shape=shape)
    a, b = values(shapes[0], dtype, seed=1), values(shapes[1], dtype, seed=2)
    got = shardmm.matmul(a, b, mesh=mesh)
    want = np.matmul(a.astype(np.complex128), b.astype(np.complex128))
    assert got.shape == want.shape and got.dtype == np.dtype(dtype)
    assert_close(got, want, scale(a, b), dtype)


@pytest.mark.parametrize("merge", ["auto", "never", "always"])
def test_matmul_shared_weight_merges(merge):
    mesh = shardmm.Mesh()
    x, w = values((4, 6, 5), "float64", seed=3), values((5, 7), "float64", seed=4)
    got = shardmm.matmul(x, w, mesh=mesh, merge=merge)
    assert_close(got, x @ w, scale(x, w), "float64")


def test_matmul_float16():
    mesh = shardmm.Mesh()
    a, b = values((3, 5, 8), "float16", seed=5), values((3, 8, 4), "float16", seed=6)
    got = shardmm.matmul(a, b, mesh=mesh)
    assert got.dtype == np.float16
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    # f32 accumulation, C rounded to f16 once: u16 ||C|| + (k + 2) u32 || |A||B| ||
    bound = 2.0**-11 * np.linalg.norm(want) + 10 * 2.0**-24 * np.linalg.norm(
        np.matmul(np.abs(a).astype(float), np.abs(b).astype(float)))
    assert np.linalg.norm(got.astype(np.float64) - want) <= bound


@pytest.mark.parametrize("spec,sa,sb", [
    ("bij,bjk->bik", (4, 5, 3), (4, 3, 6)),
    ("bhqd,bhkd->bhqk", (2, 3, 5, 4), (2, 3, 6, 4)),
    ("bhqk,bhkd->bhqd", (2, 3, 5, 6), (2, 3, 6, 4)),
    ("bsd,df->bsf", (3, 5, 4), (4, 7)),
    ("bji,bjk->bik", (2, 3, 4), (2, 3, 5)),
])
def test_einsum(spec, sa, sb):
    mesh = shardmm.Mesh()
    a, b = values(sa, "float64", seed=7), values(sb, "float64", seed=8)
    got = shardmm.einsum(spec, a, b, mesh=mesh)
    want = np.einsum(spec, a, b)
    assert got.shape == want.shape
    assert_close(got, want, scale(a, b), "float64")


def test_einsum_on_root_only():
    mesh = shardmm.Mesh()
    a, b = values((2, 3, 4), "float32", seed=9), values((2, 4, 5), "float32", seed=10)
    got = shardmm.einsum("bij,bjk->bik", a, b, mesh=mesh, root=0)
    if mesh.rank == 0:
        assert_close(got, np.einsum("bij,bjk->bik", a, b), scale(a, b), "float32")
    else:
        assert got is None


@pytest.mark.parametrize("spec", ["bij,bjk->bki", "ij,jk,kl->il", "bij,bjk", "bii,bij->bij",
                                  "...ij,...jk->...ik", "bij,cjk->bik", "bij,bij->bii"])
def test_einsum_unsupported(spec):
    a, b = values((2, 3, 3), "float64", seed=1), values((2, 3, 3), "float64", seed=2)
    with pytest.raises(shardmm.InvalidArgument, match="unsupported spec") as e:
        shardmm.einsum(spec, a, b)
    same_on_every_rank(str(e.value))


def test_mismatches_raise_everywhere():
    mesh = shardmm.Mesh()
    a, b = values((3, 4, 5), "float64", seed=1), values((2, 6, 2), "float64", seed=2)
    with pytest.raises(shardmm.DimensionMismatch) as e:
        shardmm.matmul(a, b, mesh=mesh)
    same_on_every_rank(str(e.value))
    with pytest.raises(shardmm.DimensionMismatch, match="batch dimensions differ") as e:
        shardmm.einsum("bij,bjk->bik", a, values((2, 5, 2), "float64", seed=3), mesh=mesh)
    same_on_every_rank(str(e.value))


def test_layouts():
    mesh = shardmm.Mesh()
    many = batched.layouts(mesh, P, False, True)
    assert many[2] == ("C[B_{x,y},I,J]" if P > 1 else "C[B,I,J]")
    if P > 1 and len(mesh.axis_names) == 2:
        assert batched.layouts(mesh, 1, False, True)[1] == "B[K,J_{y}]"
    assert batched._stored("A[B_{x},I_{y},K]", "T") == "A[B_{x},K,I_{y}]"
