"""shardmm.Mesh: the ranks of an mpi4py communicator as a grid with named axes."""

from collections.abc import Mapping, Sequence

from mpi4py import MPI

from . import _native


def _axes(shape, ranks):
    """(names, sizes) from None (near-square 2D), "x=2,y=3" / "2x3", {"x": 2, "y": 3} or (2, 3)."""
    if shape is None:
        return ["x", "y"], _native.factor_near_square(ranks, 2)
    if isinstance(shape, str):
        return _native.parse_mesh_shape(shape)
    if isinstance(shape, Mapping):
        names, sizes = list(shape.keys()), list(shape.values())
    elif isinstance(shape, Sequence) and 0 < len(shape) <= 3:
        names, sizes = ["x", "y", "z"][: len(shape)], list(shape)
    else:
        raise _native.InvalidArgument(
            f"Mesh: shape must be a dict like {{'x': 2, 'y': 2}}, a string like '2x2' or "
            f"'x=2,y=2', or up to 3 sizes, not {shape!r}")
    for name, size in zip(names, sizes):
        if not isinstance(name, str) or isinstance(size, bool) or not isinstance(size, int):
            raise _native.InvalidArgument(
                f"Mesh: axis {name!r}: {size!r} (names are strings, sizes integers)")
    return names, sizes


class Mesh:
    """A mesh of MPI ranks with named axes, over the mpi4py communicator `comm`.

    Mesh(comm=None, shape=None): comm defaults to MPI.COMM_WORLD; shape is a dict
    {"x": 2, "y": 2} (axes in order, the last varying fastest with the rank), a string "2x2"
    (axes X, Y, Z) or "x=2,y=2", or None: a near-square 2D mesh {x: p, y: q} of all ranks.
    The sizes multiply to the communicator's size. Collective (duplicates the communicator).
    """

    def __init__(self, comm=None, shape=None):
        comm = MPI.COMM_WORLD if comm is None else comm
        if not isinstance(comm, MPI.Intracomm):
            raise _native.InvalidArgument(
                f"Mesh: comm must be an mpi4py intracommunicator, not {type(comm).__name__}")
        names, sizes = _axes(shape, comm.Get_size())
        self.comm = comm
        self._mesh = _native.Mesh(comm.py2f(), names, sizes)

    @property
    def shape(self):
        """{axis name: size}, in axis order."""
        return dict(zip(self._mesh.names, self._mesh.sizes))

    @property
    def axis_names(self):
        return list(self._mesh.names)

    @property
    def size(self):
        return self._mesh.size

    @property
    def rank(self):
        return self._mesh.rank

    @property
    def coords(self):
        """This rank's coordinate along each axis."""
        return dict(zip(self._mesh.names, self._mesh.coords))

    def __repr__(self):
        return f"Mesh({self.shape})"
