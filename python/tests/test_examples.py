"""The Python examples (python/examples/) at small, uneven sizes: each checks its distributed
result against the same computation in NumPy on one process and returns 3 on a mismatch."""

import os
import sys

import pytest
from helpers import P, meshes

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import dp_train  # noqa: E402
import transformer_mlp  # noqa: E402

MLP = ["-B", "30", "-D", "17", "-F", "33", "--verify"]


@pytest.mark.parametrize("mode", ["allreduce", "seqpar"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transformer_mlp(mode, dtype):
    q = meshes()[1]
    mesh = f"{q.get('y', 1)}x{q['x']}"  # the longer axis as the model axis
    assert transformer_mlp.main(MLP + ["--mesh", mesh, "--mode", mode, "--dtype", dtype]) == 0


def test_transformer_mlp_data_parallel():
    assert transformer_mlp.main(MLP + ["--mesh", f"{P}x1"]) == 0


def test_dp_train():
    assert dp_train.main(["-N", "30", "--din", "5", "--hidden", "12", "--dout", "3",
                          "--steps", "4", "--check"]) == 0
