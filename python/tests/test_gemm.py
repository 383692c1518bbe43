"""gemm against NumPy: every dtype, transposes, alpha/beta, uneven shapes, the algorithms, the
C gemm creates, writes through `local` seen by gemm, the report, plan / dry_run, and the GIL
released while the library communicates."""

import sys
import threading
import time

import numpy as np
import pytest
from helpers import DTYPES, P, WORLD, assert_close, meshes, values
from mpi4py import MPI

import shardmm

M_, N_, K_ = 13, 7, 9  # uneven over every rank count


@pytest.fixture(scope="module")
def mesh():
    return shardmm.Mesh(shape=meshes()[1])


def op(x, t):
    return {"N": x, "T": x.T, "C": x.conj().T}[t]


def operands(mesh, dtype, transa, transb, layouts=("[I_X,J_Y]", "bc(2,3)", "[I_Y:c,J_X]")):
    a = values((M_, K_) if transa == "N" else (K_, M_), dtype, seed=10)
    b = values((K_, N_) if transb == "N" else (N_, K_), dtype, seed=11)
    c = values((M_, N_), dtype, seed=12)
    D = shardmm.DistMatrix
    return (a, b, c, D.from_global(mesh, a, layouts[0]), D.from_global(mesh, b, layouts[1]),
            D.from_global(mesh, c, layouts[2]))


TRANS = [("N", "N"), ("T", "N"), ("N", "C"), ("C", "T")]


@pytest.mark.parametrize("dtype,transa,transb",  # every dtype and every pair, each twice
                         [(d, *TRANS[(i + j) % 4]) for i, d in enumerate(DTYPES) for j in (0, 2)])
def test_gemm_against_numpy(mesh, dtype, transa, transb):
    a, b, c, A, B, C = operands(mesh, dtype, transa, transb)
    alpha, beta = (0.5 - 1j, 2j) if np.dtype(dtype).kind == "c" else (0.5, -2.0)
    out, report = shardmm.gemm(A, B, C, alpha=alpha, beta=beta, transa=transa, transb=transb)
    assert out is C and C.layout == "[I_Y:c,J_X]"
    want = alpha * op(a, transa) @ op(b, transb) + beta * c
    assert_close(C.gather(), want, np.abs(a).sum() * np.abs(b).max() + 2 * np.abs(c).max(), dtype)
    assert report["algorithm"] != "auto" and set(report["seconds"]) == {"total", "gemm", "comm",
                                                                         "redist"}


def algorithms(mesh):
    names = ["local", "ring", "sharded", "25d"] if P > 1 else ["local"]
    if len(mesh.shape) > 1:
        names.append("summa")
    if len(set(mesh.shape.values())) == 1 and len(mesh.shape) == 2:
        names.append("cannon")
    return names


@pytest.mark.parametrize("shape", meshes())
def test_algorithms(shape):
    mesh = shardmm.Mesh(shape=shape)
    layout = "[I_X,J_Y]" if "y" in shape else "[I_X,J]"
    a, b, c, A, B, C = operands(mesh, "float64", "N", "N", (layout, layout, layout))
    for algorithm in algorithms(mesh):
        C2, report = shardmm.gemm(A, B, C.copy(), beta=1.0, algorithm=algorithm)
        assert report["algorithm"] == algorithm
        assert_close(C2.gather(), a @ b + c, np.abs(a).sum() * np.abs(b).max(), "float64")


@pytest.mark.parametrize("layouts,trans", [(("[I_X,J]", "[J,K_Y]"), "NN"),
                                           (("bc(2,2)", "bc(3,2)"), "NN"),
                                           (("[I_X,J_Y]", "[J_Y,K_X]"), "TN"),
                                           (("[I,J_X]", "[J_X,K]"), "NC")])
def test_gemm_creates_c_where_the_plan_works_it(mesh, layouts, trans):
    transa, transb = trans
    a, b, _, A, B, _ = operands(mesh, "complex64", transa, transb, layouts + ("[I,J]",))
    C, report = shardmm.gemm(A, B, beta=3.0, transa=transa, transb=transb)  # beta: no C
    assert C.layout == shardmm.output_layout(A, B, transa, transb)
    assert C.shape == (M_, N_) and C.dtype == np.complex64
    assert_close(C.gather(), op(a, transa) @ op(b, transb), np.abs(a).sum() * np.abs(b).max(),
                 "complex64")
    # A C made there is the plan's: planning again for it runs the same algorithm.
    assert shardmm.dry_run(A, B, C, transa, transb)["algorithm"] == report["algorithm"]
    local = shardmm.output_layout(A, B, transa, transb, algorithm="local")
    assert P == 1 or local == "C[I,J]"  # the local product's C is replicated (on one rank:
    # every layout is, and the sharding rule's stays)


def test_created_c_moves_nothing_when_the_operands_need_nothing():
    # A's rows and B's columns split over different axes, k whole: the product needs no
    # communication, and the C gemm makes lies where it lands.
    mesh = shardmm.Mesh(shape=meshes()[1])
    a, b = values((200, 120), "float64", seed=1), values((120, 180), "float64", seed=2)
    A = shardmm.DistMatrix.from_global(mesh, a, "[I_X,J]")
    B = shardmm.DistMatrix.from_global(mesh, b, "[J,K_Y]")
    C, report = shardmm.gemm(A, B)
    assert C.layout.replace("{", "").replace("}", "") == "C[I_x,J_y]"
    assert report["bytes_received"] == 0 and report["algorithm"] in ("sharded", "local")
    assert_close(C.gather(), a @ b, np.abs(a).sum() * np.abs(b).max(), "float64")


def test_strassen_within_its_bound(mesh):
    # Strassen-Winograd (fast_crossover 8: at most 3 levels, 40 -> 5, recurse at 40^3) against
    # NumPy within its bound (docs/ALGORITHMS.md): [18^L (k0^2 + 6 k0) - 6 k] u |A| |B|, with
    # L the most levels any rank's product takes and k = 2^L k0.
    n, levels = 40, 3
    a, b = values((n, n), "float64", seed=3), values((n, n), "float64", seed=4)
    A = shardmm.DistMatrix.from_global(mesh, a, "bc(8,8)")
    B = shardmm.DistMatrix.from_global(mesh, b, "bc(8,8)")
    C, report = shardmm.gemm(A, B, algorithm="strassen", fast_crossover=8)
    assert report["algorithm"] == "strassen"
    k0 = -(-n // 2**levels)
    bound = (18**levels * (k0 * k0 + 6 * k0) - 6 * n + n * n) * 2.0**-53  # + the reference's
    err = np.abs(C.gather() - a @ b).max() / (np.abs(a).max() * np.abs(b).max())
    assert 0 < err <= bound, f"{err:.3g} > {bound:.3g}"
    p = shardmm.plan(n, n, n, algorithm="strassen")
    assert p["chosen"]["algorithm"] == "strassen"


def test_auto_picks_strassen_only_when_allowed(mesh):
    n = 2048  # planned only: past the default crossover (1536), where Strassen may win
    without = shardmm.plan(n, n, n)
    assert all(c["algorithm"] != "strassen" for c in without["candidates"])
    allowed = shardmm.plan(n, n, n, allow_fast=True, fast_crossover=64)
    assert any(c["algorithm"] == "strassen" for c in allowed["candidates"])
    A = shardmm.DistMatrix.empty(mesh, (n // 8, n // 8), "float64", "bc(16,16)")
    assert shardmm.dry_run(A, A, A.copy())["algorithm"] != "strassen"
    picked = shardmm.dry_run(A, A, A.copy(), allow_fast=True, fast_crossover=16)["algorithm"]
    chosen = shardmm.plan(n // 8, n // 8, n // 8, allow_fast=True, fast_crossover=16,
                          grid=tuple(mesh.shape.values()), nb=16)["chosen"]["algorithm"]
    assert picked == chosen


def test_a_write_through_local_is_seen_by_gemm(mesh):
    a, b, _, A, B, _ = operands(mesh, "float32", "N", "N")
    A.local[...] *= 2.0  # the tile, in place
    C, _ = shardmm.gemm(A, B)
    assert_close(C.gather(), (2 * a) @ b, 2 * np.abs(a).sum() * np.abs(b).max(), "float32")


def test_plan_and_dry_run(mesh):
    p = shardmm.plan(512, 512, 512, ranks=4, memory_limit="1G")
    assert p["chosen"]["fits"] and p["candidates"][0]["name"] == p["chosen"]["name"]
    assert p["lower_bound"] > 0 and p["chosen"]["name"] in p["explain"]
    assert p["memory_policy"] == "limit"
    # lean by default: operands that must move cannot fit 1.3 x, so the leanest runs and the
    # plan names what a larger budget buys
    lean = shardmm.plan(2048, 2048, 2048, ranks=8)
    assert lean["memory_policy"] == "lean" and lean["larger_budget"]["name"] == "25d 2x2x2"
    assert lean["chosen"]["added_bytes"] < lean["larger_budget"]["added_bytes"]
    # SUMMA 8x1's panels of B go down a chain of 8: relayed during the GEMMs on several hosts,
    # its fill is paid once, not per panel (the same words, a lower time)
    one, four = (shardmm.plan(32768, 2048, 2048, ranks=8, grid=(8, 1), nb=256, hosts=h,
                              algorithm="summa")["chosen"] for h in (1, 4))
    assert one["name"] == four["name"] == "summa(C) 8x1" and one["words"] == four["words"]
    assert four["seconds"] < one["seconds"]
    _, _, _, A, B, C = operands(mesh, "float64", "N", "N")
    if P > 1:
        assert shardmm.dry_run(A, B, C, algorithm="ring")["algorithm"] == "ring"
    assert shardmm.dry_run(A, B)["algorithm"] != "auto"


@pytest.mark.skipif(P < 2 or MPI.Query_thread() < MPI.THREAD_MULTIPLE,
                    reason="needs 2 ranks and MPI_THREAD_MULTIPLE")
def test_gil_is_released_during_gemm():
    # Rank 0 starts a gemm in a thread; the others join it only once rank 0's main thread has
    # sent them a message, which it can do only while the gemm waits with the GIL released.
    # C is given, so the library's gemm is the worker's first call that waits for the others
    # (without it, gemm's agreement on the new C would be).
    comm = WORLD.Dup()
    mesh = shardmm.Mesh(shape={"x": P})
    A = shardmm.DistMatrix.from_global(mesh, np.ones((64, 64)), "[I_X,J]")
    C = shardmm.DistMatrix.from_global(mesh, np.zeros((64, 64)), "[I_X,J]")
    native_gemm = shardmm._native.gemm
    entered = threading.Event()

    def seen(frame, event, arg):  # the profiler's hook: the worker calls into the library
        if event == "c_call" and arg is native_gemm:
            entered.set()

    def work():
        sys.setprofile(seen)
        results.append(shardmm.gemm(A, A, C))
        sys.setprofile(None)

    results = []
    worker = threading.Thread(target=work)
    if comm.Get_rank() == 0:
        worker.start()
        assert entered.wait(timeout=60), "the worker never called the library's gemm"
        # The GIL goes back to the worker, which is a call away from the library's wait: this
        # rank goes on only once the library lets go of the GIL again.
        time.sleep(0.05)
        for r in range(1, P):
            comm.send("go", dest=r)
    else:
        deadline = time.monotonic() + 10
        while not comm.Iprobe(source=0):
            assert time.monotonic() < deadline, "rank 0's main thread is blocked: GIL held"
            time.sleep(0.001)
        comm.recv(source=0)
        worker.start()
    worker.join()
    assert np.allclose(results[0][0].gather(), 64.0)
    comm.Free()


def test_wait_modes_give_the_same_product(mesh):
    """wait="sleep" and "spin" (Options::wait) give the product bitwise alike; a bad mode is
    InvalidArgument."""
    a, b, c, A, B, C = operands(mesh, np.float64, "N", "N",
                                ("[I_X,J_Y]", "[I_X,J_Y]", "[I_X,J_Y]"))
    products = []
    for wait in ("sleep", "spin"):
        shardmm.gemm(A, B, C, beta=0.0, wait=wait)
        products.append(C.gather())
    assert np.allclose(products[0], a @ b)
    assert np.array_equal(products[0], products[1])
    with pytest.raises(shardmm.InvalidArgument, match="wait"):
        shardmm.gemm(A, B, C, wait="doze")


@pytest.mark.parametrize("wire,u", [("bf16", 2.0**-8), ("f16", 2.0**-11)])
def test_wire_format_halves_the_operand_bytes(mesh, wire, u):
    """float32 operands sent as 16-bit: within (2 u_w + (k + 2) u32) |A||B|, half the bytes."""
    a, b, c, A, B, C = operands(mesh, np.float32, "N", "N",
                                ("[I_X,J_Y]", "[I_X,J_Y]", "[I_X,J_Y]"))
    opts = {"algorithm": "summa", "stationary": "C"} if len(mesh.shape) > 1 else {}
    _, full = shardmm.gemm(A, B, C, beta=0.0, **opts)
    _, narrow = shardmm.gemm(A, B, C, beta=0.0, wire=wire, **opts)
    assert 2 * narrow["bytes_sent"] == full["bytes_sent"]
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = (2 * u + (K_ + 2) * 2.0**-24) * np.abs(a).astype(np.float64) @ np.abs(b)
    assert np.all(np.abs(C.gather() - exact) <= bound)
    with pytest.raises(shardmm.InvalidArgument):
        shardmm.gemm(A, B, C, wire="f8")


def test_one_meaning_per_option(mesh):
    # ring_chunk cuts the 2-rank ring's swap (more messages, the same product); strassen_step
    # is read (depth_first runs, breadth_first needs 7 Q ranks); bad values and the old
    # spellings (a panel for the ring, a grid for Strassen) raise on every rank.
    a, b, c, A, B, C = operands(mesh, np.float64, "N", "N")
    _, whole = shardmm.gemm(A, B, C, beta=0.0, algorithm="ring")
    _, chunked = shardmm.gemm(A, B, C, beta=0.0, algorithm="ring", ring_chunk=1)
    assert_close(C.gather(), a @ b, np.abs(a).sum() * np.abs(b).max(), "float64")
    if P == 2:
        assert chunked["messages"] > whole["messages"]
    shardmm.gemm(A, B, C, beta=0.0, algorithm="strassen", strassen_step="depth_first")
    assert_close(C.gather(), a @ b, np.abs(a).sum() * np.abs(b).max(), "float64")
    if P % 7 != 0:
        with pytest.raises(shardmm.NotSupported):
            shardmm.gemm(A, B, C, algorithm="strassen", strassen_step="breadth-first")
    for bad in ({"strassen_step": "sideways"}, {"ring_chunk": -1}, {"stationary_chunk": -2},
                {"algorithm": "ring", "panel": 4},
                {"algorithm": "strassen", "grid": (1, 1, 7)}):
        with pytest.raises(shardmm.InvalidArgument):
            shardmm.gemm(A, B, C, **bad)
