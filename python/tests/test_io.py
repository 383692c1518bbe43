"""The collective .npy and raw readers and writers against NumPy's own files."""

import os

import numpy as np
import pytest
from helpers import WORLD, meshes, values

import shardmm


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
@pytest.mark.parametrize("order", ["F", "C"])
def test_npy_round_trip(shared_dir, dtype, order):
    mesh = shardmm.Mesh(shape=meshes()[1])
    a = values((9, 5), dtype, seed=20)
    path = os.path.join(shared_dir, f"a-{dtype}-{order}.npy")
    shardmm.write_npy(path, shardmm.DistMatrix.from_global(mesh, a, "[I_X:c,J_Y]"), order=order)
    assert np.array_equal(np.load(path), a)  # written whole before write_npy returns
    M = shardmm.read_npy(path, mesh, "bc(2,2)")
    assert M.dtype == np.dtype(dtype) and np.array_equal(M.gather(), a)


def test_read_numpys_file_and_raw(shared_dir):
    mesh = shardmm.Mesh(shape=meshes()[0])
    a = values((6, 7), "float64", seed=21)
    path = os.path.join(shared_dir, "numpy.npy")
    if WORLD.Get_rank() == 0:
        np.save(path, np.ascontiguousarray(a))  # C order
    WORLD.Barrier()
    M = shardmm.read_npy(path, mesh, "[I,J_X]")
    assert np.array_equal(M.gather(), a)
    raw = os.path.join(shared_dir, "a.raw")
    shardmm.write_raw(raw, M, order="C")
    assert np.array_equal(np.fromfile(raw).reshape(6, 7), a)
    R = shardmm.read_raw(raw, mesh, (6, 7), "float64", "[I_X,J]", order="C")
    assert np.array_equal(R.gather(), a)
