"""shardmm.gemm, shardmm.matmul, shardmm.dry_run, shardmm.output_layout and shardmm.plan."""

import numpy as np
from mpi4py import MPI

from . import _native, batched
from ._agree import agreed
from .matrix import DistMatrix, to_dtype
from .mesh import Mesh

def to_bytes(limit):
    """None, an int of bytes, or a string read as the launcher's --memory-limit reads it
    (shardmm::parse_bytes): "512M" / "2G" / "512MiB" (powers of 1024) or "500MB" / "2GB"
    (powers of 1000)."""
    if limit is None or (isinstance(limit, int) and not isinstance(limit, bool)):
        return limit
    return _native.parse_bytes(str(limit))


def _matrix(x, name):
    if not isinstance(x, DistMatrix):
        raise _native.InvalidArgument(
            f"gemm: {name} must be a shardmm.DistMatrix, not {type(x).__name__}")
    return x._m


def _output(mesh, a, b, transa, transb, options):
    """The C gemm creates for native matrices a, b on `mesh`: zeros of A's dtype in the layout
    the planner picks (the one the chosen algorithm works C in). Planning is pure; one
    agreement makes a failure (e.g. a machine profile one rank cannot read) raise on every
    rank."""
    made = []  # this rank's matrix (the agreement passes only None around)
    agreed(mesh, "gemm",
           lambda: made.append(_native.output_matrix(a, b, transa, transb, options)))
    return DistMatrix(made[0], mesh)


def _options(algorithm, memory_limit, allow_fast, options):
    options.update(algorithm=algorithm, memory_limit=to_bytes(memory_limit),
                   allow_fast=allow_fast)
    return options


def gemm(A, B, C=None, alpha=1, beta=0, transa="N", transb="N", algorithm="auto",
         memory_limit=None, allow_fast=False, **options):
    """C <- alpha op(A) op(B) + beta C; returns (C, report).

    op is "N" (as is), "T" (transposed) or "C" (conjugate-transposed). Without C, a new C is
    made in the layout the planner picks (output_layout: the one the chosen algorithm works C
    in, so no C moves). algorithm: auto (the planner's choice), local, summa, cannon, ring,
    sharded, 25d, strassen (Strassen-Winograd: a looser error bound, docs/ALGORITHMS.md).
    memory_limit: bytes per rank (int, or "512M", "2G"). allow_fast: auto may pick strassen.
    Further options (gemm's Options, one meaning each): panel (SUMMA's k-panel width),
    stationary_chunk (SUMMA A/B-stationary's chunk), ring_chunk (the 2-rank ring's chunk,
    a longer ring's pass), block, stationary, overlap, ring_axis, ring_form, bidirectional, wire ("f32", "bf16",
    "f16": float32 operands travel in 16 bits), wait ("spin", "sleep", "auto": how the ranks
    wait for messages; auto follows SHARDMM_WAIT), grid=(rows, cols, k_slices) (2.5D's),
    strassen_step ("auto", "breadth_first", "depth_first"), blas_threads, fast_crossover.
    report: a dict
    (algorithm, grid, detail,
    bytes_sent, bytes_received, messages, redist_bytes_sent, redist_bytes_received,
    seconds={total, gemm, comm, redist}, blas_threads). Collective; the GIL is released while
    the library communicates and computes.
    """
    a, b = _matrix(A, "A"), _matrix(B, "B")
    options = _options(algorithm, memory_limit, allow_fast, options)
    if C is None:
        C, beta = _output(A.mesh, a, b, transa, transb, options), 0
    c = _matrix(C, "C")
    report = _native.gemm(a, b, c, complex(alpha), complex(beta), transa, transb, options)
    return C, report


_WORLD_MESH = []  # the default mesh of matmul (made once, by every rank's first call)


def default_mesh():
    """A near-square 2D mesh of MPI.COMM_WORLD, made on the first call and kept."""
    if not _WORLD_MESH:
        _WORLD_MESH.append(Mesh(MPI.COMM_WORLD))
    return _WORLD_MESH[0]


def _operand_dtype(x):
    """NumPy's dtype of an operand as from_global takes it: integers (and bools) are float64."""
    dt = np.asarray(x).dtype
    return dt if dt.kind in "fc" else np.dtype("float64")


def matmul(a, b, *, mesh=None, root=None, **options):
    """a @ b for NumPy arrays that every rank holds alike, computed over
    the ranks of `mesh` (default: a near-square 2D mesh of MPI.COMM_WORLD, made once): each rank
    keeps its tiles (DistMatrix.from_global, which checks that the ranks passed the same
    values), gemm multiplies with the planner's choice, and the product comes back as a NumPy
    array (Fortran order) on every rank (root=None) or on rank `root` only (None elsewhere).
    The dtype is NumPy's for a @ b, integers becoming float64. options: gemm's (algorithm,
    memory_limit, ...). Arrays of other dimensions follow NumPy's matmul rules as batched
    products (batched.matmul_nd: batch dimensions broadcast, 1-D operands promoted, float16
    too; merge="auto"|"never"|"always"). dtype="bf16": a and b are uint16 arrays of bf16 bit
    patterns (shardmm.to_bf16), multiplied as batched products, and so is the result
    (docs/PYTHON.md, "bf16"). Collective."""
    mesh = default_mesh() if mesh is None else mesh
    bf16 = options.get("dtype") is not None  # batched.batched_product checks it
    if bf16 or np.ndim(a) > 2 or np.ndim(b) > 2 or (np.ndim(a) >= 1 and np.ndim(b) >= 1 and
                                                    min(np.ndim(a), np.ndim(b)) < 2):
        return batched.matmul_nd(a, b, mesh=mesh, root=root, **options)
    dtype = np.result_type(_operand_dtype(a), _operand_dtype(b))
    A = DistMatrix.from_global(mesh, a, dtype=dtype)
    B = DistMatrix.from_global(mesh, b, dtype=dtype)
    C, _ = gemm(A, B, **options)
    return C.gather(root)


def einsum(spec, a, b, *, mesh=None, root=None, **options):
    """numpy.einsum(spec, a, b) as batched products over the ranks of `mesh` (default: as
    matmul's) for the two-operand contractions a Transformer uses: bij,bjk->bik,
    bhqd,bhkd->bhqk, bhqk,bhkd->bhqd, bsd,df->bsf (any spec of that shape: batch indices, then
    one contracted index in either position of each operand; b may have no batch). Another spec
    raises InvalidArgument. Every rank passes the same arrays; the result on every rank
    (root=None) or on rank root. dtype="bf16": uint16 arrays of bf16 bit patterns in and out
    (shardmm.to_bf16 / from_bf16). Collective."""
    mesh = default_mesh() if mesh is None else mesh
    return batched.einsum(spec, a, b, mesh=mesh, root=root, **options)


def dry_run(A, B, C=None, transa="N", transb="N", algorithm="auto", memory_limit=None,
            allow_fast=False, **options):
    """What gemm(A, B, C, ...) would run (algorithm, grid, detail). Without C, it plans for
    the C gemm would create (which this allocates; one agreement, else no communication)."""
    a, b = _matrix(A, "A"), _matrix(B, "B")
    options = _options(algorithm, memory_limit, allow_fast, options)
    c = _matrix(_output(A.mesh, a, b, transa, transb, options) if C is None else C, "C")
    return _native.dry_run(a, b, c, transa, transb, options)


def output_layout(A, B, transa="N", transb="N", algorithm="auto", memory_limit=None,
                  allow_fast=False, **options):
    """The layout gemm(A, B, ...) without C makes its C in, with these options: the planner's
    pick (shardmm::gemm_output_layout, docs/PYTHON.md). Pure: no communication."""
    a, b = _matrix(A, "A"), _matrix(B, "B")
    options = _options(algorithm, memory_limit, allow_fast, options)
    return _native.output_spec(a, b, transa, transb, options)


def plan(m, n, k, ranks=None, dtype="float64", memory_limit=None, grid=None, nb=64,
         transa="N", transb="N", algorithm="auto", allow_fast=False, fast_crossover=None, hosts=1):
    """The planner's candidates and choice for an m x n x k product on `ranks` (default: the
    size of MPI.COMM_WORLD), without communicating: a dict with chosen (a candidate dict:
    name, algorithm, grid, words, redist_words, messages, flops, memory_bytes, seconds, fits),
    candidates (cheapest first), lower_bound (words per rank) and explain (the table). grid
    (pm, pn): plan as gemm does for operands already block-cyclic bc(nb, nb) on that grid.
    allow_fast: Strassen candidates too (auto may choose one); algorithm (a name): chosen is
    that algorithm's cheapest candidate (strassen is then priced even without allow_fast).
    hosts: the ranks span that many hosts (above 1, as gemm plans on a mesh across hosts: the
    GEMMs relay the chain broadcasts, whose fill a stream of panels then pays once)."""
    ranks = MPI.COMM_WORLD.Get_size() if ranks is None else ranks
    pm, pn = (0, 0) if grid is None else grid
    limit = to_bytes(memory_limit) or 0
    return _native.plan(m, n, k, ranks, to_dtype(dtype), limit, pm, pn, nb, transa, transb,
                        algorithm, bool(allow_fast), fast_crossover or 0, int(hosts))
