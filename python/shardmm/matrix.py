"""shardmm.DistMatrix: a matrix cut over a Mesh, each rank holding its tile."""

import zlib

import numpy as np

from . import _native
from ._agree import agreed, same_everywhere

SUPPORTED = tuple(np.dtype(t) for t in ("float32", "float64", "complex64", "complex128"))


def to_dtype(dtype):
    """A supported NumPy dtype from anything np.dtype() takes; InvalidArgument otherwise."""
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise _native.InvalidArgument(f"dtype {dtype!r} is not a dtype ({e})") from None
    if dt.newbyteorder("=") not in SUPPORTED:
        raise _native.InvalidArgument(
            f"dtype {dt} is not supported (float32, float64, complex64, complex128)")
    return dt.newbyteorder("=")


def to_shape(shape, what="shape"):
    """(m, n) from a pair of non-negative integers."""
    try:
        m, n = (int(x) for x in shape)
    except (TypeError, ValueError):
        raise _native.InvalidArgument(f"{what} must be (rows, cols), not {shape!r}") from None
    if m < 0 or n < 0:
        raise _native.InvalidArgument(f"{what} {(m, n)} has a negative extent")
    return m, n


def checksum(a, dtype):
    """A 64-bit checksum of the array's values as `dtype`: CRC-32 and Adler-32 of its bytes in
    C order (one pass; a copy only when a is not C-ordered `dtype` already)."""
    data = memoryview(np.ascontiguousarray(a, dtype=dtype)).cast("B")
    return zlib.crc32(data) << 32 | zlib.adler32(data)


def default_layout(mesh):
    """Rows over the mesh's first axis, columns over its second (if any): [I_{x},J_{y}]."""
    names = mesh.axis_names
    cols = f"J_{{{names[1]}}}" if len(names) > 1 else "J"
    return f"[I_{{{names[0]}}},{cols}]"


class DistMatrix:
    """An m x n matrix on a Mesh, in a layout written in the notation ("A[I_X,J_Y]", "bc(2,2)",
    docs/ARCHITECTURE.md). Make one with DistMatrix.empty, DistMatrix.from_global,
    DistMatrix.from_local, shardmm.read_npy, redistribute, gemm or A @ B."""

    def __init__(self, native, mesh):
        self._m = native
        self.mesh = mesh

    @classmethod
    def empty(cls, mesh, shape, dtype="float64", layout=None):
        """A zero matrix of `shape` (m, n) and `dtype`; layout defaults to [I_{x},J_{y}] over
        the mesh's first two axes. Collective in name only (no communication)."""
        m, n = to_shape(shape)
        layout = default_layout(mesh) if layout is None else layout
        return cls(_native.Matrix.empty(mesh._mesh, m, n, to_dtype(dtype), layout), mesh)

    @classmethod
    def from_global(cls, mesh, array, layout=None, *, shape=None, dtype=None):
        """Every rank passes the same global array (any 2-D array-like) or a callable
        f(i, j) vectorised over index arrays (i a column of global row indices, j a row of
        global column indices, as np.ix_ gives; the result broadcasts to the tile), with
        `shape` then required; each rank keeps its own tile (no communication but one
        agreement that every rank passed the same shape, dtype and, for an array, values: a
        64-bit checksum of its bytes, so ranks passing different arrays raise InvalidArgument
        on every rank). dtype: the array's (integers become float64) or, for a callable,
        float64 unless given."""
        kind = "a callable" if callable(array) else "an array"

        def check():
            if callable(array):
                if shape is None:
                    raise _native.InvalidArgument("from_global: a callable needs shape=(m, n)")
                return to_shape(shape), to_dtype("float64" if dtype is None else dtype).name, None
            a = np.asarray(array)
            if a.ndim != 2:
                raise _native.InvalidArgument(
                    f"from_global: the array must be 2-D, not {a.ndim}-D of shape {a.shape}")
            dt = to_dtype(dtype if dtype is not None else
                          (a.dtype if a.dtype.kind in "fc" else "float64"))
            if a.dtype.kind == "c" and dt.kind != "c":
                raise _native.InvalidArgument(f"from_global: a complex array as {dt}")
            return a.shape, dt.name, checksum(a, dt)

        def describe(v):
            values = "" if v[2] is None else f" (checksum {v[2]:016x})"
            return f"{kind} {v[0][0]}x{v[0][1]} {v[1]}{values}"

        (m, n), dtname, _ = same_everywhere(mesh, "from_global", check, describe)
        M = cls.empty(mesh, (m, n), dtname, layout)

        def fill():
            local = M.local
            if not M._m.holds_values or local.size == 0:
                return  # zeros: an unreduced layout's partial sums off coordinate 0
            rows, cols = M.global_rows(), M.global_cols()
            if callable(array):
                tile = np.asarray(array(rows[:, None], cols[None, :]))
                if tile.dtype.kind == "c" and local.dtype.kind != "c":
                    raise _native.InvalidArgument(f"from_global: f gives complex values for {dtname}")
                local[...] = np.broadcast_to(tile, local.shape)
            else:
                local[...] = np.asarray(array)[np.ix_(rows, cols)]

        agreed(mesh, "from_global", fill)  # a callable may fail on some ranks only
        return M

    @classmethod
    def from_local(cls, mesh, local, shape, layout=None, *, dtype=None):
        """A `shape` (m, n) matrix from the tile each rank already holds: `local` is this
        rank's part of it in `layout` (default as DistMatrix.empty), a 2-D array of the tile's
        shape (DistMatrix.empty(mesh, shape, layout=layout).local.shape; its global indices are
        global_rows() x global_cols()). The tile is copied; in an unreduced layout ("{U_X}")
        each rank's tile is its partial sum (the matrix is their sum). Every rank must pass
        the same shape, layout and dtype (dtype: the tiles' own, integers becoming float64,
        unless given); a tile of the wrong shape raises InvalidArgument on every rank, naming the rank
        and the shape its layout gives it. Collective (one agreement)."""
        layout = default_layout(mesh) if layout is None else layout
        M = cls.empty(mesh, to_shape(shape, "from_local: shape"), "float64", layout)
        want = M.local.shape

        def check():
            a = np.asarray(local)
            if a.ndim != 2 or a.shape != want:
                raise _native.InvalidArgument(
                    f"from_local: rank {mesh.rank}'s tile is {'x'.join(map(str, a.shape))} "
                    f"({a.ndim}-D), and {M.layout} of a {M.shape[0]}x{M.shape[1]} matrix gives "
                    f"it {want[0]}x{want[1]} (its rows: global_rows(), its columns: "
                    f"global_cols() of DistMatrix.empty with that shape and layout)")
            dt = to_dtype(dtype if dtype is not None else
                          (a.dtype if a.dtype.kind in "fc" else "float64"))
            if a.dtype.kind == "c" and dt.kind != "c":
                raise _native.InvalidArgument(f"from_local: a complex tile as {dt}")
            return dt.name

        dtname = same_everywhere(mesh, "from_local", check, lambda v: v)
        if dtname != "float64":
            M = cls.empty(mesh, M.shape, dtname, layout)
        M.local[...] = np.asarray(local)
        return M

    def __matmul__(self, other):
        """A @ B: gemm(A, B)'s C, in the layout the planner picks (output_layout). Collective."""
        if not isinstance(other, DistMatrix):
            return NotImplemented
        from .ops import gemm  # ops imports this module

        return gemm(self, other)[0]

    @property
    def local(self):
        """This rank's tile: a NumPy array (Fortran order) viewing the matrix's storage. Writing
        to it changes the matrix; it keeps the matrix alive."""
        return self._m.local

    @property
    def shape(self):
        return (self._m.rows, self._m.cols)

    @property
    def dtype(self):
        return self._m.dtype

    @property
    def layout(self):
        """The layout in the notation, e.g. "A[I_X,J_Y]"."""
        return self._m.spec

    def global_rows(self):
        """Global row index of each local row (int64 array)."""
        return self._m.global_rows()

    def global_cols(self):
        """Global column index of each local column (int64 array)."""
        return self._m.global_cols()

    def gather(self, root=None):
        """The global array (Fortran order): on every rank (root=None), or on `root` only
        (None elsewhere). Collective; pending partial sums are added."""
        if root is None:
            return self._m.redistribute("[I,J]").local  # replicated: the whole matrix per rank
        return self._m.gather(int(root))

    def redistribute(self, layout):
        """A new matrix with the same values in `layout` (one all-to-all). Collective."""
        return DistMatrix(self._m.redistribute(layout), self.mesh)

    def copy(self):
        return self.redistribute(self.layout)

    def __repr__(self):
        return f"DistMatrix({self._m.description}, {self.dtype})"
