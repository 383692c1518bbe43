"""shardmm.gemm, shardmm.dry_run and shardmm.plan."""

import re

from mpi4py import MPI

from . import _native
from .matrix import DistMatrix, to_dtype

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def to_bytes(limit):
    """None, an int of bytes, or a string like "512M" / "2G" (K, M, G: powers of 1024)."""
    if limit is None or (isinstance(limit, int) and not isinstance(limit, bool)):
        return limit
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([KMG]?)\s*", str(limit))
    if not m:
        raise _native.InvalidArgument(f"bad memory_limit {limit!r} (bytes, or e.g. 512M, 2G)")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def _matrix(x, name):
    if not isinstance(x, DistMatrix):
        raise _native.InvalidArgument(
            f"gemm: {name} must be a shardmm.DistMatrix, not {type(x).__name__}")
    return x._m


def _output(A, B, transa, transb):
    """The C gemm creates: op(A)'s row sharding, op(B)'s column sharding, A's dtype."""
    spec = _native.output_spec(A._m, B._m, transa, transb)  # raises on a bad transa / transb
    m = A.shape[0] if str(transa).upper() == "N" else A.shape[1]
    n = B.shape[1] if str(transb).upper() == "N" else B.shape[0]
    return DistMatrix(_native.Matrix.empty(A.mesh._mesh, m, n, A.dtype, spec), A.mesh)


def gemm(A, B, C=None, alpha=1, beta=0, transa="N", transb="N", algorithm="auto",
         memory_limit=None, **options):
    """C <- alpha op(A) op(B) + beta C; returns (C, report).

    op is "N" (as is), "T" (transposed) or "C" (conjugate-transposed). Without C, a new C is
    made with op(A)'s row sharding and op(B)'s column sharding (columns replicated where that
    would use a mesh axis twice). algorithm: auto (the planner's choice), local, summa, cannon,
    ring, sharded, 25d. memory_limit: bytes per rank (int, or "512M", "2G"). Further options
    (gemm's Options): panel, block, stationary, overlap, ring_axis, ring_form, bidirectional,
    grid=(rows, cols, k_slices), blas_threads. report: a dict (algorithm, grid, detail,
    bytes_sent, bytes_received, messages, redist_bytes_sent, redist_bytes_received,
    seconds={total, gemm, comm, redist}, blas_threads). Collective; the GIL is released while
    the library communicates and computes.
    """
    a, b = _matrix(A, "A"), _matrix(B, "B")
    if C is None:
        C, beta = _output(A, B, transa, transb), 0
    c = _matrix(C, "C")
    options.update(algorithm=algorithm, memory_limit=to_bytes(memory_limit))
    report = _native.gemm(a, b, c, complex(alpha), complex(beta), transa, transb, options)
    return C, report


def dry_run(A, B, C=None, transa="N", transb="N", algorithm="auto", memory_limit=None,
            **options):
    """What gemm(A, B, C, ...) would run (algorithm, grid, detail), without communicating.
    Without C, it plans for the C gemm would create (which this allocates)."""
    a, b = _matrix(A, "A"), _matrix(B, "B")
    c = _matrix(_output(A, B, transa, transb) if C is None else C, "C")
    options.update(algorithm=algorithm, memory_limit=to_bytes(memory_limit))
    return _native.dry_run(a, b, c, transa, transb, options)


def plan(m, n, k, ranks=None, dtype="float64", memory_limit=None, grid=None, nb=64,
         transa="N", transb="N"):
    """The planner's candidates and choice for an m x n x k product on `ranks` (default: the
    size of MPI.COMM_WORLD), without communicating: a dict with chosen (a candidate dict:
    name, algorithm, grid, words, redist_words, messages, flops, memory_bytes, seconds, fits),
    candidates (cheapest first), lower_bound (words per rank) and explain (the table). grid
    (pm, pn): plan as gemm does for operands already block-cyclic bc(nb, nb) on that grid."""
    ranks = MPI.COMM_WORLD.Get_size() if ranks is None else ranks
    pm, pn = (0, 0) if grid is None else grid
    limit = to_bytes(memory_limit) or 0
    return _native.plan(m, n, k, ranks, to_dtype(dtype), limit, pm, pn, nb, transa, transb)
