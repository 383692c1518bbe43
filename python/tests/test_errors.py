"""Bad calls raise the library's error class with the same text on every rank, before any
rank is left waiting in a collective."""

import numpy as np
import pytest
from helpers import P, WORLD, meshes, same_on_every_rank

import shardmm


@pytest.fixture(scope="module")
def mesh():
    return shardmm.Mesh(shape=meshes()[1])


def raises(cls, call, match=None):
    with pytest.raises(cls, match=match) as e:
        call()
    same_on_every_rank(f"{type(e.value).__name__}: {e.value}")
    return e.value


def ones(mesh, shape, dtype="float64", layout="[I_X,J_Y]"):
    return shardmm.DistMatrix.from_global(mesh, np.ones(shape, dtype), layout)


def test_mismatched_shapes(mesh):
    A, B = ones(mesh, (5, 4)), ones(mesh, (3, 6))
    e = raises(shardmm.DimensionMismatch, lambda: shardmm.gemm(A, B), "inner dimensions")
    assert isinstance(e, ValueError)
    raises(shardmm.DimensionMismatch, lambda: shardmm.gemm(A, ones(mesh, (4, 2)), ones(mesh, (5, 3))))


def test_bad_layout_strings(mesh):
    e = raises(shardmm.ParseError, lambda: ones(mesh, (4, 4), layout="A[I_X,J_Y"))
    assert isinstance(e, shardmm.InvalidArgument) and e.position == 9 and e.text == "A[I_X,J_Y"
    raises(shardmm.InvalidArgument, lambda: ones(mesh, (4, 4), layout="[I_Q,J]"), "Q")
    raises(shardmm.ParseError, lambda: ones(mesh, (4, 4)).redistribute("bc(2"))


def test_dtype_mismatch_and_unsupported_dtypes(mesh):
    A, B = ones(mesh, (4, 4), "float64"), ones(mesh, (4, 4), "float32")
    raises(shardmm.InvalidArgument, lambda: shardmm.gemm(A, B), "float64, float32")
    raises(shardmm.InvalidArgument, lambda: shardmm.DistMatrix.empty(mesh, (2, 2), "int32"))
    raises(shardmm.InvalidArgument, lambda: shardmm.gemm(A, A, alpha=1j), "alpha is complex")
    raises(shardmm.InvalidArgument, lambda: shardmm.gemm(A, np.ones((4, 4))), "DistMatrix")


def test_bad_options(mesh):
    A = ones(mesh, (4, 4))
    raises(shardmm.InvalidArgument, lambda: shardmm.gemm(A, A, transa="X"), "transpose")
    raises(shardmm.InvalidArgument, lambda: shardmm.gemm(A, A, algorithm="fast"), "algorithm")
    raises(shardmm.InvalidArgument, lambda: shardmm.gemm(A, A, panle=64), "unknown option")
    raises(shardmm.InvalidArgument, lambda: shardmm.gemm(A, A, C=A), "other than A and B")
    raises(shardmm.InvalidArgument, lambda: shardmm.gemm(A, A, memory_limit="lots"))
    raises(shardmm.OutOfMemory, lambda: shardmm.gemm(A, A, memory_limit=16), "needs")
    raises(shardmm.InvalidArgument, lambda: A.gather(root=P), "root")


def test_bad_meshes():
    raises(shardmm.InvalidArgument, lambda: shardmm.Mesh(shape={"x": P + 1}), "ranks")
    raises(shardmm.InvalidArgument, lambda: shardmm.Mesh(shape={"x": "2"}))
    raises(shardmm.InvalidArgument, lambda: shardmm.Mesh(comm="world"))
    m1, m2 = shardmm.Mesh(shape={"x": P}), shardmm.Mesh(shape={"x": P})
    A, B = ones(m1, (4, 4), layout="[I_X,J]"), ones(m2, (4, 4), layout="[I_X,J]")
    raises(shardmm.InvalidArgument, lambda: shardmm.gemm(A, B), "same Mesh")


def test_ranks_passing_different_arrays(mesh):
    mine = np.ones((4, 4 + WORLD.Get_rank()))  # rank-dependent: caught by the agreement
    if P > 1:
        raises(shardmm.InvalidArgument, lambda: shardmm.DistMatrix.from_global(mesh, mine),
               "different")

    same_shape = np.full((4, 4), float(WORLD.Get_rank()))  # same shape and dtype, not values
    if P > 1:
        raises(shardmm.InvalidArgument, lambda: shardmm.DistMatrix.from_global(mesh, same_shape),
               "different arguments.*checksum")
    # The same values in another memory order or as integers are the same array.
    a = np.arange(12.0).reshape(3, 4)
    alike = [a, np.asfortranarray(a), a.astype(np.int32)][WORLD.Get_rank() % 3]
    assert np.array_equal(shardmm.DistMatrix.from_global(mesh, alike).gather(), a)

    def fails_on_rank_0(i, j):  # rank 0's tile is never empty
        if WORLD.Get_rank() == 0:
            raise ZeroDivisionError("no")
        return i + j

    raises(shardmm.InvalidArgument, lambda: shardmm.DistMatrix.from_global(
        mesh, fails_on_rank_0, shape=(4, 4)), "ZeroDivisionError")
    raises(shardmm.InvalidArgument, lambda: shardmm.DistMatrix.from_global(mesh, np.ones(3)), "2-D")


def test_missing_file(mesh, tmp_path):
    e = raises(shardmm.IoError, lambda: shardmm.read_npy("/nonexistent/a.npy", mesh))
    assert isinstance(e, OSError)
