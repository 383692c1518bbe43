"""Agreement for checks made in Python: every rank runs the check, then one allgather tells
every rank whether any failed; if one did, every rank raises the lowest failing rank's error
(same class, same text), so no rank goes on into a collective call the others left. The
allgather is the library's (shardmm._native.allgather over the mesh): a library call, so
SHARDMM_WATCHDOG names a rank that never makes it (rank 0 alone calling gemm, say)."""

import pickle

from . import _native

_CLASSES = {
    cls.__name__: cls
    for cls in (
        _native.Error,
        _native.InvalidArgument,
        _native.ParseError,
        _native.DimensionMismatch,
        _native.NotSupported,
        _native.MpiError,
        _native.OutOfMemory,
        _native.IoError,
    )
}


def allgather(mesh, value, what):
    """Every rank's picklable value, by rank (collective over the shardmm.Mesh `mesh`)."""
    mine = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return [pickle.loads(b) for b in _native.allgather(mesh._mesh, mine, what)]


def agreed(mesh, what, check):
    """check() on every rank of mesh; returns every rank's result (a list, by rank) or raises.

    A shardmm error keeps its class; any other exception becomes InvalidArgument naming
    `what` and the exception's type.
    """
    try:
        outcome = (None, check())
    except _native.Error as e:
        outcome = ((type(e).__name__, str(e)), None)
    except Exception as e:  # noqa: BLE001 - any failure of the check is the caller's bad input
        outcome = (("InvalidArgument", f"{what}: {type(e).__name__}: {e}"), None)
    outcomes = allgather(mesh, outcome, what)
    for failure, _ in outcomes:
        if failure is not None:
            raise _CLASSES[failure[0]](failure[1])
    return [value for _, value in outcomes]


def same_everywhere(mesh, what, check, describe):
    """Like agreed(), and the value must be the same on every rank (else InvalidArgument,
    listing the ranks' values with describe(value))."""
    values = agreed(mesh, what, check)
    if any(v != values[0] for v in values):
        listing = ", ".join(f"rank {r}: {describe(v)}" for r, v in enumerate(values))
        raise _native.InvalidArgument(f"{what}: the ranks passed different arguments ({listing})")
    return values[0]
