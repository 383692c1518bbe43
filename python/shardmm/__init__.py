"""shardmm from Python: distributed dense matrix multiplication over MPI (docs/PYTHON.md).

A ``Mesh`` of the ranks of an mpi4py communicator with named axes; a ``DistMatrix`` cut over
its axes as a layout in JAX's notation (``"A[I_X,J_Y]"``) or ScaLAPACK's ``"bc(64,64)"``, whose
``local`` tile is a NumPy view of the library's storage; ``gemm`` computes
``C <- alpha op(A) op(B) + beta C`` with the algorithm the planner picks (``A @ B`` for
short); ``matmul`` multiplies NumPy arrays and ``multiply_files`` .npy files. Every call is
collective over the mesh; a bad call raises the same error (one class per library error) on
every rank.
"""

try:
    from ._native import (
        DimensionMismatch,
        Error,
        InvalidArgument,
        IoError,
        MpiError,
        NotSupported,
        OutOfMemory,
        ParseError,
        blas_threads,
        set_blas_threads,
    )
    from ._native import version as __version__
    from .batched import from_bf16, to_bf16
    from .io import multiply_files, read_npy, read_raw, write_npy, write_raw
    from .matrix import DistMatrix
    from .mesh import Mesh
    from .ops import dry_run, einsum, gemm, matmul, output_layout, plan
except ImportError as e:  # the module, or numpy / mpi4py: say when the interpreter is not its
    from . import _build

    raise ImportError(_build.hint(e)) from e

__all__ = [
    "DimensionMismatch",
    "DistMatrix",
    "Error",
    "InvalidArgument",
    "IoError",
    "Mesh",
    "MpiError",
    "NotSupported",
    "OutOfMemory",
    "ParseError",
    "blas_threads",
    "dry_run",
    "einsum",
    "from_bf16",
    "gemm",
    "matmul",
    "multiply_files",
    "output_layout",
    "plan",
    "read_npy",
    "read_raw",
    "set_blas_threads",
    "to_bf16",
    "write_npy",
    "write_raw",
]
