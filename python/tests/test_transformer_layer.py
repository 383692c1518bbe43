"""The Transformer layer example (python/examples/transformer_layer.py) on every data x model
mesh of this many ranks (1x1; 1x2, 2x1; 1x3, 3x1; 1x4, 2x2, 4x1) in f32 and bf16, and on one
mesh in f64: the forward output y, dx and every weight gradient against the NumPy reference
within the bound of the dtype (docs/EXAMPLES.md); the reference's gradients against central
differences; a head count the model axis does not divide is refused."""

import os
import sys

import numpy as np
import pytest
from helpers import P

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import layer_reference as ref  # noqa: E402
import transformer_layer  # noqa: E402

import shardmm  # noqa: E402

MESHES = [(X, P // X) for X in range(1, P + 1) if P % X == 0]


def sizes(X, Y):
    """N sequences (2 per data rank), S = 5, H = 2 heads per model rank of width 3; F = 4 D + 1
    is split unevenly over Y > 1."""
    H = 2 * Y
    return {"N": 2 * X, "S": 5, "D": 3 * H, "H": H, "F": 12 * H + 1}


def run_layer(X, Y, dtype):
    z = sizes(X, Y)
    g = ref.inputs(z["N"], z["S"], z["D"], z["F"], dtype, seed=X * 10 + Y)
    layer = transformer_layer.Layer(shardmm.Mesh(shape={"x": X, "y": Y}), g, z["N"], z["H"], dtype)
    layer.forward()
    got = {k: m.gather() for k, m in layer.backward().items()}
    return ref.rel_errors(got, ref.reference(g, z["N"], z["H"]))


# f32 and bf16 on every mesh; f64 on the 2D one (or the only one): the suite's time is bounded.
CASES = [(m, d) for m in MESHES for d in ("f32", "bf16")] + [(MESHES[len(MESHES) // 2], "f64")]


@pytest.mark.parametrize("mesh,dtype", CASES, ids=[f"{x}x{y}-{d}" for (x, y), d in CASES])
def test_layer_against_numpy(mesh, dtype):
    errors = run_layer(*mesh, dtype)
    assert sorted(errors) == sorted(ref.OUTPUTS)
    bad = {k: e for k, e in errors.items() if not e <= ref.BOUNDS[dtype]}
    assert not bad, f"above {ref.BOUNDS[dtype]:.2e}: {bad}"
    if dtype == "bf16":  # the bf16 layer does round: its errors exceed the f32 bound
        assert max(errors.values()) > ref.BOUNDS["f32"]


def test_reference_gradients_by_central_differences():
    N, S, D, F, H = 2, 4, 6, 10, 2
    g = ref.inputs(N, S, D, F)
    out = ref.reference(g, N, H)
    rng = np.random.default_rng(7)
    direction = {k: rng.standard_normal(g[k].shape) for k in ("x",) + ref.WEIGHTS}

    def loss(eps):
        moved = dict(g, **{k: g[k] + eps * v for k, v in direction.items()})
        return float((ref.reference(moved, N, H)["y"] * g["dy"]).sum())

    fd = (loss(1e-5) - loss(-1e-5)) / 2e-5
    analytic = sum(float((out["d" + k] * v).sum()) for k, v in direction.items())
    assert abs(fd - analytic) <= 1e-7 * abs(analytic)


def test_heads_must_divide():
    g = ref.inputs(3, 2, 4, 8)
    with pytest.raises(ValueError, match="heads"):
        transformer_layer.Layer(shardmm.Mesh(shape={"x": 1, "y": P}), g, 3, 2 * P + 1, "f32")
