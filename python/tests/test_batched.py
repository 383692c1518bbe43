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


def test_bf16_patterns_round_trip():
    x = np.array([1.0, -2.5, 1 + 2.0**-8, 1 + 3 * 2.0**-8, 3.0e38, np.inf, 2.0**-130],
                 dtype=np.float32)
    u = shardmm.to_bf16(x)
    assert u.dtype == np.uint16
    # ties go to even: 1 + 2^-8 -> 1, 1 + 3 * 2^-8 -> 1 + 2^-6 (bf16 keeps 7 mantissa bits)
    want = np.array([1.0, -2.5, 1.0, 1 + 2.0**-6, np.inf, np.inf, 2.0**-130], dtype=np.float32)
    assert np.array_equal(shardmm.from_bf16(u)[[0, 1, 2, 3, 5]], want[[0, 1, 2, 3, 5]])
    assert shardmm.from_bf16(u)[4] == np.float32(2.0**127 * 1.765625)  # 1.7632 -> 1 + 98/128
    assert shardmm.from_bf16(u)[6] == np.float32(2.0**-130)  # subnormal, exact in bf16
    assert np.isnan(shardmm.from_bf16(shardmm.to_bf16(np.float32(np.nan))))


@pytest.mark.parametrize("spec,sa,sb", [("bhqd,bhkd->bhqk", (2, 3, 5, 16), (2, 3, 6, 16)),
                                        ("bsd,df->bsf", (3, 5, 16), (16, 7))])
def test_einsum_bf16(spec, sa, sb):
    mesh = shardmm.Mesh()
    a = shardmm.to_bf16(values(sa, "float32", seed=11))
    b = shardmm.to_bf16(values(sb, "float32", seed=12))
    got = shardmm.einsum(spec, a, b, mesh=mesh, dtype="bf16")
    assert got.dtype == np.uint16
    fa, fb = shardmm.from_bf16(a).astype(float), shardmm.from_bf16(b).astype(float)
    want = np.einsum(spec, fa, fb)
    # exact bf16 inputs, f32 accumulation, C rounded to bf16 once:
    # u16 ||C|| + (k + 2) u32 || |A||B| ||, u16 = 2^-8
    k = sa[-1]
    bound = 2.0**-8 * np.linalg.norm(want) + (k + 2) * 2.0**-24 * np.linalg.norm(
        np.einsum(spec, np.abs(fa), np.abs(fb)))
    err = np.linalg.norm(shardmm.from_bf16(got).astype(float) - want)
    assert err <= bound
    assert err > 0  # rounded to bf16: a product of 16 terms is not exact in 8 bits
    same_on_every_rank(got.tobytes())


def test_matmul_bf16_2d_and_errors():
    mesh = shardmm.Mesh()
    a = shardmm.to_bf16(values((6, 4), "float32", seed=13))
    b = shardmm.to_bf16(values((4, 3), "float32", seed=14))
    got = shardmm.matmul(a, b, mesh=mesh, dtype="bf16")
    assert got.shape == (6, 3) and got.dtype == np.uint16
    want = shardmm.from_bf16(a).astype(float) @ shardmm.from_bf16(b).astype(float)
    assert np.allclose(shardmm.from_bf16(got), want, rtol=2.0**-7, atol=1e-6)
    with pytest.raises(shardmm.InvalidArgument, match="uint16"):
        shardmm.matmul(a.astype(np.float32), b.astype(np.float32), mesh=mesh, dtype="bf16")
    with pytest.raises(shardmm.InvalidArgument, match="bf16"):
        shardmm.einsum("bij,bjk->bik", a[None], b[None], mesh=mesh, dtype="f8")


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
