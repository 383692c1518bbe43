"""pytest under mpiexec: every rank runs every test (the same ones, in the same order, since the
tests are collective). A test that fails on any rank prints its report to stderr and aborts
MPI.COMM_WORLD, so the job ends with a non-zero status at once instead of leaving the other
ranks waiting in a collective. Only rank 0 prints pytest's progress and summary."""

import shutil
import sys
import tempfile

import pytest
from mpi4py import MPI

WORLD = MPI.COMM_WORLD
P = WORLD.Get_size()


@pytest.fixture(scope="module")
def shared_dir():
    """One directory every rank sees (rank 0 makes it)."""
    path = WORLD.bcast(tempfile.mkdtemp(prefix="shardmm-py-") if WORLD.Get_rank() == 0 else None)
    yield path
    WORLD.Barrier()
    if WORLD.Get_rank() == 0:
        shutil.rmtree(path)


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if WORLD.Get_rank() != 0:  # after the terminal plugin made its reporter: drop it
        reporter = config.pluginmanager.getplugin("terminalreporter")
        if reporter is not None:
            config.pluginmanager.unregister(reporter)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        sys.stderr.write(f"\n[rank {WORLD.Get_rank()} of {P}] {item.nodeid} failed "
                         f"({report.when}):\n{report.longreprtext}\n")
        sys.stderr.flush()
        WORLD.Abort(1)


def pytest_collectreport(report):
    if report.failed:  # a rank that cannot collect would leave the others in a collective
        sys.stderr.write(f"\n[rank {WORLD.Get_rank()} of {P}] collecting {report.nodeid} "
                         f"failed:\n{report.longreprtext}\n")
        sys.stderr.flush()
        WORLD.Abort(1)
