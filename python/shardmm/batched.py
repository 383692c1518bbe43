"""Batched products from Python: shardmm.matmul on arrays of more than two dimensions (NumPy's
batching rules) and shardmm.einsum for the two-operand contractions a Transformer uses."""

import numpy as np

from . import _native
from ._agree import agreed


def _axes(mesh):
    return "{" + ",".join(mesh.axis_names) + "}"


def layouts(mesh, batch, a_shared, b_shared):
    """The batched layouts (A, B, C) matmul runs in: with at least as many products as ranks,
    the batch over every mesh axis (each product on one rank, nothing moves); else the batch
    over the first axis and, on the others, the rows of A and C (or, with A shared, the
    columns of C; with B shared, B's and C's columns): no product needs to move an operand."""
    names = mesh.axis_names
    if batch >= mesh.size or len(names) == 1:
        b = f"B_{_axes(mesh)}" if mesh.size > 1 else "B"
        return (("A[I,K]" if a_shared else f"A[{b},I,K]"),
                ("B[K,J]" if b_shared else f"B[{b},K,J]"), f"C[{b},I,J]")
    b, rest = "B_{" + names[0] + "}", "{" + ",".join(names[1:]) + "}"
    if b_shared:
        return f"A[{b},I,K]", f"B[K,J_{rest}]", f"C[{b},I,J_{rest}]"
    if a_shared:
        return f"A[I,K]", f"B[{b},K,J_{rest}]", f"C[{b},I,J_{rest}]"
    return f"A[{b},I_{rest},K]", f"B[{b},K,J]", f"C[{b},I_{rest},J]"


def _stored(layout, trans):
    """The layout of X stored transposed (op(X) = X^T has `layout`): its two matrix
    dimensions swapped."""
    if trans == "N":
        return layout
    name, dims = layout.split("[", 1)
    out, depth, cur = [], 0, ""
    for ch in dims[:-1]:  # split at the commas outside axis groups {..}
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    out[-2], out[-1] = out[-1], out[-2]
    return name + "[" + ",".join(out) + "]"


def to_bf16(x):
    """float32 values as bf16 bit patterns (uint16 array of x's shape): the top 16 bits of each
    f32, rounded to nearest even (as shardmm rounds; NaN stays NaN)."""
    x32 = np.array(x, dtype=np.float32, order="C")  # a copy: its bits are viewed below
    bits = x32.view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16
    return np.where(np.isnan(x32), (bits >> 16) | np.uint32(0x40), rounded).astype(np.uint16)


def from_bf16(u):
    """bf16 bit patterns (a uint16 array) as float32 values (exact)."""
    u = np.asarray(u)
    if u.dtype != np.uint16:
        raise _native.InvalidArgument(f"from_bf16: needs a uint16 array, got {u.dtype}")
    wide = np.array(u, dtype=np.uint32)  # an array even for one value: its bits are viewed
    wide <<= np.uint32(16)
    return wide.view(np.float32)


def _dtype(a, b):
    """NumPy's dtype for a @ b, integers (and bools) becoming float64."""
    return np.result_type(a.dtype if a.dtype.kind in "fc" else np.float64,
                          b.dtype if b.dtype.kind in "fc" else np.float64)


def batched_product(a, b, transa="N", transb="N", *, mesh, root=None, merge="auto",
                    dtype=None, **options):
    """op(a[p]) op(b[p]) for 3-D a and b (or one of them 2-D: shared by every p), every rank
    holding the same arrays; the (batch, m, n) product on every rank (root=None) or on rank
    root only. dtype="bf16": a and b are uint16 arrays of bf16 bit patterns, and so is the
    product (f32 accumulation, rounded once). Collective over the mesh."""
    bf16 = dtype is not None and str(dtype) == "bf16"
    if dtype is not None and not bf16:
        raise _native.InvalidArgument(f"dtype must be None or 'bf16', got {dtype!r}")
    if bf16 and (np.asarray(a).dtype != np.uint16 or np.asarray(b).dtype != np.uint16):
        raise _native.InvalidArgument(
            "dtype='bf16' takes uint16 arrays of bf16 bit patterns (shardmm.to_bf16 makes them "
            f"from float32), got {np.asarray(a).dtype} and {np.asarray(b).dtype}")
    dt = np.uint16 if bf16 else _dtype(a, b)
    a = np.ascontiguousarray(a, dtype=dt)
    b = np.ascontiguousarray(b, dtype=dt)
    batch = a.shape[0] if a.ndim == 3 else b.shape[0]
    lay = list(layouts(mesh, batch, a.ndim == 2, b.ndim == 2))
    lay[0], lay[1] = _stored(lay[0], transa), _stored(lay[1], transb)
    out = []
    agreed(mesh, "matmul", lambda: out.append(_native.matmul_batched(
        mesh._mesh, a, b, transa, transb, lay, options, merge, 0 if root is None else root,
        bf16)))
    C = out[0]
    if root is None:
        C = mesh.comm.bcast(C, root=0)
    return C


def matmul_nd(a, b, *, mesh, root=None, **options):
    """a @ b with NumPy's rules for arrays of any dimension >= 1 (at least one above 2): a 1-D
    operand gains a dimension that the result drops, batch dimensions broadcast, an operand
    whose batch is one matrix is shared by every product (run as one merged product where its
    layout allows)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        raise _native.InvalidArgument("matmul: operands must have at least one dimension")
    a2, b2 = (a[None, :] if a.ndim == 1 else a), (b[:, None] if b.ndim == 1 else b)
    if a2.shape[-1] != b2.shape[-2]:
        raise _native.DimensionMismatch(
            f"matmul: shapes {a.shape} and {b.shape} do not fit ({a2.shape[-1]} != {b2.shape[-2]})")
    try:
        batch_shape = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError as e:
        raise _native.DimensionMismatch(
            f"matmul: batch dimensions of {a.shape} and {b.shape} do not broadcast") from e
    nb = int(np.prod(batch_shape, dtype=np.int64))

    def flat(x):
        if int(np.prod(x.shape[:-2], dtype=np.int64)) == 1 and nb != 1:
            return x.reshape(x.shape[-2:])  # one matrix: shared by every product
        return np.broadcast_to(x, batch_shape + x.shape[-2:]).reshape((nb,) + x.shape[-2:])

    fa, fb = flat(a2), flat(b2)
    if fa.ndim == 2 and fb.ndim == 2:  # a batch of one: one product
        fa = fa[None]
    C = batched_product(fa, fb, mesh=mesh, root=root, **options)
    if C is None:
        return None
    C = C.reshape(batch_shape + C.shape[-2:])
    if a.ndim == 1:
        C = C[..., 0, :]
    if b.ndim == 1:
        C = C[..., 0]
    return C


def _parse_einsum(spec):
    """(a, b, out) index strings of a two-operand explicit einsum."""
    s = spec.replace(" ", "")
    if "->" not in s or s.count(",") != 1 or "." in s:
        return None
    ins, out = s.split("->")
    a, b = ins.split(",")
    if not (a.isalpha() and b.isalpha() and out.isalpha()):
        return None
    return a, b, out


def _plan_einsum(spec):
    """How einsum runs `spec` as a batched product: (transa, transb, a_batched, b_batched,
    batch letters), or None when it is not one of the forms supported."""
    parsed = _parse_einsum(spec)
    if parsed is None:
        return None
    a, b, out = parsed
    if len(a) < 2 or len(b) < 2 or len(out) < 2 or len(set(a)) != len(a) or len(set(b)) != len(b):
        return None
    batch = out[:-2]
    if a[:-2] != batch or b[:-2] not in (batch, ""):
        return None
    (p, q), (x, y), (u, v) = out[-2:], a[-2:], b[-2:]
    contracted = set((x, y)) & set((u, v))
    if len(contracted) != 1 or p == q:
        return None
    c = contracted.pop()
    if c in out or {x, y} != {p, c} or {u, v} != {c, q}:
        return None
    return ("N" if y == c else "T", "N" if u == c else "T", b[:-2] != "", batch)


SUPPORTED = ("bij,bjk->bik", "bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "bsd,df->bsf")


def einsum(spec, a, b, *, mesh, root=None, **options):
    """Two-operand einsum as batched products: out = batch + (p, q), a = batch + two indices,
    b = batch + two indices (or just two: shared by every product), one index contracted
    (either position in a and in b), e.g. bij,bjk->bik, bhqd,bhkd->bhqk, bhqk,bhkd->bhqd,
    bsd,df->bsf. Any other spec raises InvalidArgument (use numpy.einsum for those)."""
    plan = _plan_einsum(spec)
    if plan is None:
        raise _native.InvalidArgument(
            f"einsum: unsupported spec '{spec}': shardmm runs two-operand contractions "
            f"batch+(i,j),batch+(j,k)->batch+(i,k) with one contracted index, either operand "
            f"order (e.g. {', '.join(SUPPORTED)}); the second operand may have no batch")
    transa, transb, b_batched, batch = plan
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != len(batch) + 2 or b.ndim != (len(batch) if b_batched else 0) + 2:
        raise _native.DimensionMismatch(
            f"einsum: '{spec}' needs {len(batch) + 2}-D a and "
            f"{(len(batch) if b_batched else 0) + 2}-D b, got {a.shape} and {b.shape}")
    if b_batched and a.shape[:-2] != b.shape[:-2]:
        raise _native.DimensionMismatch(
            f"einsum: batch dimensions differ: {a.shape[:-2]} and {b.shape[:-2]}")
    k_a = a.shape[-1] if transa == "N" else a.shape[-2]
    k_b = b.shape[-2] if transb == "N" else b.shape[-1]
    if k_a != k_b:
        raise _native.DimensionMismatch(
            f"einsum: the contracted index has {k_a} in a {a.shape} and {k_b} in b {b.shape}")
    bshape = a.shape[:-2]
    nb = int(np.prod(bshape, dtype=np.int64))
    fa = a.reshape((nb,) + a.shape[-2:])
    fb = b.reshape((nb,) + b.shape[-2:]) if b_batched else b
    C = batched_product(fa, fb, transa, transb, mesh=mesh, root=root, **options)
    return None if C is None else C.reshape(bshape + C.shape[-2:])
