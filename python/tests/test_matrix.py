"""Mesh and DistMatrix: from_global / empty / gather / redistribute on every dtype and on
uneven layouts, the zero-copy local tile."""

import gc

import numpy as np
import pytest
from helpers import DTYPES, P, WORLD, meshes, values

import shardmm

# On the 2D mesh {x, y}: block (uneven at 7 x 5), cyclic and block-cyclic with a source
# offset, both axes on one dimension, ScaLAPACK's shorthand, replicated, pending partial sums.
LAYOUTS = ["A[I_X,J_Y]", "[I_Y,J_X]", "[I_XY,J]", "[I,J_YX]",
           "[I_X:bc2+%d,J_Y:c]" % (1 if P > 1 else 0), "bc(2,3)", "[I,J]", "[I,J_X]{U_Y}"]


@pytest.fixture(scope="module")
def mesh():
    return shardmm.Mesh(shape=meshes()[1])


@pytest.mark.parametrize("layout,dtype", [(lay, DTYPES[i % 4]) for i, lay in enumerate(LAYOUTS)])
def test_from_global_keeps_each_ranks_tile(mesh, layout, dtype):
    a = values((7, 5), dtype, seed=1)
    M = shardmm.DistMatrix.from_global(mesh, a, layout)
    assert M.shape == (7, 5) and M.dtype == np.dtype(dtype)
    if "U_" not in layout:
        assert np.array_equal(M.local, a[np.ix_(M.global_rows(), M.global_cols())])
    assert np.array_equal(M.gather(), a)  # the sum of partials for {U_Y}


def test_gather_to_one_root(mesh):
    a = values((6, 9), "float64", seed=2)
    M = shardmm.DistMatrix.from_global(mesh, a, "[I_Y,J_X:c]")
    for root in range(P):
        got = M.gather(root=root)
        assert (got is None) == (WORLD.Get_rank() != root)
        if got is not None:
            assert np.array_equal(got, a)


def test_local_is_a_view_of_the_storage(mesh):
    a = values((9, 4), "float64", seed=3)
    M = shardmm.DistMatrix.from_global(mesh, a, "A[I_X,J_Y]")
    view = M.local
    assert view.flags.f_contiguous and view.flags.writeable
    assert np.shares_memory(view, M.local)  # every access views the same storage
    view[...] = -1.0  # every element of every tile
    assert np.array_equal(M.gather(), np.full((9, 4), -1.0))
    del M
    gc.collect()
    view += 1.0  # the view keeps the matrix alive
    assert np.all(view == 0.0)


def test_from_callable_and_empty(mesh):
    M = shardmm.DistMatrix.from_global(mesh, lambda i, j: 10.0 * i + j, "[I_X:bc2,J_Y]",
                                       shape=(5, 8), dtype="complex64")
    assert M.dtype == np.complex64
    assert np.array_equal(M.gather(), np.fromfunction(lambda i, j: 10.0 * i + j, (5, 8)))
    Z = shardmm.DistMatrix.empty(mesh, (3, 11), "float32")
    assert Z.layout.replace("{", "").replace("}", "").lower() == "[i_x,j_y]"
    assert np.array_equal(Z.gather(), np.zeros((3, 11), np.float32))


@pytest.mark.parametrize("src", ["[I_X,J_Y]", "bc(2,2)", "[I,J_X]{U_Y}"])
@pytest.mark.parametrize("dst", ["[I_XY,J]", "[I_Y:c,J_X]", "[I,J]"])
def test_redistribute(mesh, src, dst):
    a = values((11, 6), "complex128", seed=4)
    M = shardmm.DistMatrix.from_global(mesh, a, src).redistribute(dst)
    assert np.array_equal(M.gather(), a)
    assert np.array_equal(M.local, a[np.ix_(M.global_rows(), M.global_cols())])


@pytest.mark.parametrize("shape", meshes() + [None, "x=%d" % P, (P, 1)])
def test_mesh_shapes(shape):
    mesh = shardmm.Mesh(shape=shape)
    assert mesh.size == P and np.prod(list(mesh.shape.values())) == P
    assert mesh.rank == WORLD.Get_rank()


def test_mesh_on_a_split_communicator():
    sub = WORLD.Split(WORLD.Get_rank() % 2, WORLD.Get_rank())
    mesh = shardmm.Mesh(sub)
    a = values((5, 4), "float64", seed=5 + WORLD.Get_rank() % 2)  # each half its own matrix
    M = shardmm.DistMatrix.from_global(mesh, a)
    assert np.array_equal(M.gather(), a)
    sub.Free()
