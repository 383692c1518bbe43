"""The NumPy-like entries: A @ B, shardmm.matmul on NumPy arrays, DistMatrix.from_local,
shardmm.multiply_files, read_npy of integer files, write_npy's C order, byte units."""

import os

import numpy as np
import pytest
from helpers import P, WORLD, assert_close, meshes, same_on_every_rank, values

import shardmm
from shardmm.ops import to_bytes


def saved(shared_dir, name, array):
    """`array` saved by rank 0 as shared_dir/name (numpy.save), visible to every rank."""
    path = os.path.join(shared_dir, name)
    if WORLD.Get_rank() == 0:
        np.save(path, array)
    WORLD.Barrier()
    return path


@pytest.mark.parametrize("shape", meshes())
def test_matmul_operator(shape):
    mesh = shardmm.Mesh(shape=shape)
    a, b = values((7, 5), "float64", seed=1), values((5, 6), "float64", seed=2)
    A = shardmm.DistMatrix.from_global(mesh, a)
    B = shardmm.DistMatrix.from_global(mesh, b, "[I,J]")
    C = A @ B
    assert isinstance(C, shardmm.DistMatrix)
    assert C.layout == shardmm.output_layout(A, B)  # gemm's C, where the planner works it
    assert_close(C.gather(), a @ b, 10.0, "float64")
    assert A.__matmul__(a) is NotImplemented  # a NumPy operand is not silently distributed


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "complex64"),
                                    ("int64", "float32")])
def test_matmul_of_arrays_on_every_rank(dtypes):
    a = values((9, 4), dtypes[0], seed=3) if dtypes[0][0] != "i" else \
        np.arange(36, dtype=dtypes[0]).reshape(9, 4) % 7
    b = values((4, 3), dtypes[1], seed=4)
    want = np.asarray(a, dtype=np.complex128) @ b
    got = shardmm.matmul(a, b)
    expected = np.result_type(np.float64 if a.dtype.kind == "i" else a.dtype, b.dtype)
    assert got.dtype == expected and got.shape == (9, 3)
    assert_close(got, want, 10.0, got.dtype)


def test_matmul_on_root_and_mesh():
    mesh = shardmm.Mesh(shape={"x": P})
    a, b = values((6, 8), "float64", seed=5), values((8, 2), "float64", seed=6)
    got = shardmm.matmul(a, b, mesh=mesh, root=P - 1, algorithm="ring")
    if WORLD.Get_rank() == P - 1:
        assert_close(got, a @ b, 10.0, "float64")
    else:
        assert got is None


def test_matmul_of_different_arrays_raises_everywhere():
    a = values((4, 4), "float64", seed=7) + WORLD.Get_rank()  # differs from rank to rank
    if P == 1:
        pytest.skip("one rank cannot differ")
    with pytest.raises(shardmm.InvalidArgument, match="different arguments") as e:
        shardmm.matmul(a, a)
    same_on_every_rank(str(e.value))


@pytest.mark.parametrize("layout", ["A[I_X,J_Y]", "bc(2,3)", "[I_XY,J]", "C[I,J]{U_X}"])
def test_from_local(layout):
    mesh = shardmm.Mesh(shape=meshes()[1])
    a = values((11, 7), "complex128", seed=8)
    like = shardmm.DistMatrix.empty(mesh, a.shape, layout=layout)
    mine = a[np.ix_(like.global_rows(), like.global_cols())]  # the tile this rank already has
    parts = mesh.shape["x"] if "{U_X}" in layout else 1  # unreduced: the tiles are partial sums
    M = shardmm.DistMatrix.from_local(mesh, mine / parts, a.shape, layout)
    assert M.dtype == np.complex128 and M.layout == like.layout
    assert np.allclose(M.gather(), a, rtol=1e-14, atol=1e-14)
    ints = shardmm.DistMatrix.from_local(mesh, np.ones(mine.shape, dtype=np.int32), a.shape, layout)
    assert ints.dtype == np.float64


def test_from_local_bad_tile_raises_everywhere():
    mesh = shardmm.Mesh(shape={"x": P})
    rows = shardmm.DistMatrix.empty(mesh, (8, 3)).local.shape[0]
    bad = WORLD.Get_rank() == P - 1
    tile = np.zeros((rows + 1 if bad else rows, 3))
    got = WORLD.bcast(rows + 1, root=P - 1)  # the last rank's wrong row count
    with pytest.raises(shardmm.InvalidArgument, match=f"rank {P - 1}'s tile is {got}x3") as e:
        shardmm.DistMatrix.from_local(mesh, tile, (8, 3))
    same_on_every_rank(str(e.value))


def test_read_npy_of_integers(shared_dir):
    mesh = shardmm.Mesh(shape=meshes()[1])
    a = (np.arange(35, dtype=np.int32).reshape(7, 5) - 10)
    for name, array in (("i32.npy", a), ("i64-f.npy", np.asfortranarray(a.astype(np.int64))),
                        ("u8-1d.npy", np.arange(6, dtype=np.uint8))):
        M = shardmm.read_npy(saved(shared_dir, name, array), mesh, "bc(2,2)")
        want = array.reshape(-1, 1) if array.ndim == 1 else array
        assert M.dtype == np.float64 and np.array_equal(M.gather(), want.astype(np.float64))
    text = saved(shared_dir, "s.npy", np.array([["a", "b"]]))
    with pytest.raises(shardmm.IoError, match="cannot read .npy file"):
        shardmm.read_npy(text, mesh)


def test_write_npy_is_c_order_by_default(shared_dir):
    mesh = shardmm.Mesh(shape=meshes()[1])
    a = values((5, 4), "float32", seed=9)
    M = shardmm.DistMatrix.from_global(mesh, a)
    for order, fortran in ((None, False), ("F", True)):
        path = os.path.join(shared_dir, f"w-{order}.npy")
        shardmm.write_npy(path, M) if order is None else shardmm.write_npy(path, M, order=order)
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            assert np.lib.format._read_array_header(f, version)[1] == fortran  # noqa: SLF001
        assert np.array_equal(np.load(path), a)


@pytest.mark.parametrize("out_of_core", [False, True])
def test_multiply_files(shared_dir, out_of_core):
    a, b = values((40, 24), "float64", seed=10), values((24, 16), "float64", seed=11)
    c0 = values((40, 16), "float64", seed=12)
    pa, pb = saved(shared_dir, "fa.npy", a), saved(shared_dir, "fb.npy", b)
    pc = saved(shared_dir, "fc.npy", c0)
    out = os.path.join(shared_dir, f"out-{out_of_core}.npy")
    report = shardmm.multiply_files(pa, pb, out, c0=pc, alpha=2.0, out_of_core=out_of_core,
                                    memory_limit="64KiB" if out_of_core else None)
    assert report["plan"]["out_of_core"] == out_of_core and report["bytes_written"] >= 0
    assert report["plan"]["io"] == "posix" and report["plan"]["runs_read"] > 0
    got = np.load(out)
    assert not np.isfortran(got)
    assert_close(got, 2 * a @ b + c0, 40.0, "float64")
    report = shardmm.multiply_files(pa, pb, out, transa="N", order="F")
    assert np.isfortran(np.load(out)) and np.allclose(np.load(out), a @ b)


def test_multiply_files_errors_everywhere(shared_dir):
    pa = saved(shared_dir, "ea.npy", np.zeros((4, 3)))
    with pytest.raises(shardmm.DimensionMismatch) as e:
        shardmm.multiply_files(pa, pa, os.path.join(shared_dir, "never.npy"))
    same_on_every_rank(str(e.value))


def test_byte_units():
    # the launcher's parser (shardmm::parse_bytes), so the same spellings as --memory-limit
    assert to_bytes("4M") == to_bytes("4MiB") == to_bytes("4k") * 1024 == 4 << 20
    assert to_bytes("4MB") == 4_000_000 and to_bytes("2GB") == 2 * 10**9
    assert to_bytes("1.5KiB") == 1536 and to_bytes(123) == 123 and to_bytes("7") == 7
    with pytest.raises(shardmm.InvalidArgument, match="bad byte count '4 parsecs'"):
        to_bytes("4 parsecs")
