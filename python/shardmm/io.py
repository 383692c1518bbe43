"""Collective file I/O: .npy files (versions 1-3) and headerless raw binary, read and written
with MPI-IO, each rank moving only its own tile (no rank holds the whole matrix). Writes go to
a temporary file renamed onto the path only when every rank succeeded. multiply_files: the
product of matrix files, out of core when the operands do not fit a memory budget."""

import os

import numpy as np

from . import _native
from ._agree import agreed, same_everywhere
from .matrix import DistMatrix, to_dtype, to_shape
from .ops import default_mesh, to_bytes


def _order(order):
    if order not in ("C", "F"):
        raise _native.InvalidArgument(f"order must be 'C' (row-major) or 'F', not {order!r}")
    return order == "F"


def _integer_header(path):
    """(shape as (m, n), dtype name) of an .npy file of integers or bools, else None."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        shape, _, dtype = np.lib.format._read_array_header(f, version)  # noqa: SLF001
    if dtype.kind not in "iub" or len(shape) not in (1, 2):
        return None
    return (shape[0], shape[1] if len(shape) == 2 else 1), dtype.name


def _read_integers(path, mesh, layout, shape):
    """An .npy file of integers as a float64 DistMatrix (from_global's rule): each rank reads
    its tile's elements through a memory map of the file (only the pages they are on)."""
    M = DistMatrix.empty(mesh, shape, "float64", layout)

    def fill():
        if not M._m.holds_values or M.local.size == 0:
            return  # zeros: an unreduced layout's partial sums off coordinate 0
        data = np.load(path, mmap_mode="r")
        data = data.reshape(shape) if data.ndim == 1 else data
        M.local[...] = data[np.ix_(M.global_rows(), M.global_cols())]

    agreed(mesh, "read_npy", fill)
    return M


def read_npy(path, mesh, layout=None):
    """A DistMatrix of the .npy file's shape and dtype in `layout` (default as
    DistMatrix.empty). A 1-D array of n elements is n x 1. Integer (and bool) files become
    float64, as DistMatrix.from_global converts integer arrays. Collective; IoError on every
    rank when the file is missing, malformed or of another dtype."""
    path = os.fspath(path)
    try:
        header = _native.read_npy_header(path, mesh._mesh)
    except _native.IoError:
        def probe():
            try:
                return _integer_header(path)
            except (OSError, ValueError):
                return None  # the library's error says what is wrong

        ints = same_everywhere(mesh, "read_npy", probe, repr)
        if ints is None:
            raise
        return _read_integers(path, mesh, layout, ints[0])
    M = DistMatrix.empty(mesh, header["shape"], header["dtype"], layout)
    _native.read_npy(path, M._m)
    return M


def write_npy(path, M, order="C"):
    """Writes M as a .npy file in C order (row-major, as numpy.save writes) or, with
    order="F", Fortran order (column-major: each rank's tile in longer contiguous runs).
    Collective."""
    _native.write_npy(os.fspath(path), M._m, _order(order))


def read_raw(path, mesh, shape, dtype, layout=None, order="F"):
    """A DistMatrix read from a headerless file of exactly m * n elements. Collective."""
    M = DistMatrix.empty(mesh, to_shape(shape), to_dtype(dtype), layout)
    _native.read_raw(os.fspath(path), M._m, _order(order))
    return M


def write_raw(path, M, order="F"):
    """Writes M's elements without a header. Collective."""
    _native.write_raw(os.fspath(path), M._m, _order(order))


def multiply_files(a, b, out, *, mesh=None, c0=None, alpha=1, beta=None, transa="N",
                   transb="N", order="C", memory_limit=None, io="posix", out_of_core=False,
                   **options):
    """out <- alpha op(a) op(b) + beta c0 for .npy files a, b (and c0), written to the .npy
    file `out` in `order` ("C" or "F"): the launcher's `shardmm multiply` from Python
    (docs/OUT_OF_CORE.md). The operands stream from the files in blocks and panels, reads,
    GEMMs and writes overlapped, within a per-rank budget when one is set (memory_limit: bytes,
    or "512M", "2GiB"; else SHARDMM_MEMORY_LIMIT); a named algorithm (options) runs on layouts
    in core when the operands fit. No rank holds a whole matrix. beta defaults to 1 with c0,
    else 0. io: "posix", "mpiio" or "mmap" (how panels are read); out_of_core: stream under the
    budget even when everything fits. options: gemm's (algorithm, ...). mesh: whose ranks run
    it (default: every rank of MPI.COMM_WORLD). Returns this rank's report: a dict (plan: the
    schedule's fields and its text; seconds and its parts open_seconds, read_wait_seconds,
    compute_seconds, write_wait_seconds, agree_seconds, sync_seconds, rename_seconds,
    other_seconds; io_wait_seconds, bytes_read, bytes_written, peak_rss). Collective; every
    check (files, shapes, dtypes, budget) fails alike on every rank before any data moves."""
    mesh = default_mesh() if mesh is None else mesh
    beta = (0 if c0 is None else 1) if beta is None else beta
    options.update(memory_limit=to_bytes(memory_limit))
    return _native.multiply_files(
        mesh._mesh, os.fspath(a), os.fspath(b), os.fspath(out),
        "" if c0 is None else os.fspath(c0), transa, transb, complex(alpha), complex(beta),
        _order(order), str(io), bool(out_of_core), options)
