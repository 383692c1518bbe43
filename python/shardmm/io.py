"""Collective file I/O: .npy files (versions 1-3) and headerless raw binary, read and written
with MPI-IO, each rank moving only its own tile (no rank holds the whole matrix). Writes go to
a temporary file renamed onto the path only when every rank succeeded."""

import os

from . import _native
from .matrix import DistMatrix, to_dtype, to_shape


def _order(order):
    if order not in ("C", "F"):
        raise _native.InvalidArgument(f"order must be 'C' (row-major) or 'F', not {order!r}")
    return order == "F"


def read_npy(path, mesh, layout=None):
    """A DistMatrix of the .npy file's shape and dtype in `layout` (default as
    DistMatrix.empty). A 1-D array of n elements is n x 1. Collective; IoError on every rank
    when the file is missing, malformed or of another dtype."""
    path = os.fspath(path)
    header = _native.read_npy_header(path, mesh._mesh)
    M = DistMatrix.empty(mesh, header["shape"], header["dtype"], layout)
    _native.read_npy(path, M._m)
    return M


def write_npy(path, M, order="F"):
    """Writes M as a .npy file in Fortran ("F") or C order. Collective."""
    _native.write_npy(os.fspath(path), M._m, _order(order))


def read_raw(path, mesh, shape, dtype, layout=None, order="F"):
    """A DistMatrix read from a headerless file of exactly m * n elements. Collective."""
    M = DistMatrix.empty(mesh, to_shape(shape), to_dtype(dtype), layout)
    _native.read_raw(os.fspath(path), M._m, _order(order))
    return M


def write_raw(path, M, order="F"):
    """Writes M's elements without a header. Collective."""
    _native.write_raw(os.fspath(path), M._m, _order(order))
