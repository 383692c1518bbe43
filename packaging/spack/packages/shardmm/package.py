# Spack recipe for shardmm. Use it as a package repository of its own:
#   spack repo add <checkout>/packaging/spack
#   spack install shardmm ^mpich ^blis          # or ^openmpi ^openblas, ^intel-oneapi-mkl, ...
#   spack dev-build shardmm@main                # from inside a checkout
# The MPI, BLAS and ScaLAPACK are the ones Spack's spec names; CMake is told exactly which
# (compiler wrappers, libraries, CBLAS header), so nothing else on the machine is picked up.
import os

from spack.package import *  # noqa: F401,F403 (Spack's recipe API)

# The checkout this recipe lives in (packaging/spack/packages/shardmm/package.py).
CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 4))


class Shardmm(CMakePackage):
    """Distributed dense matrix multiplication over MPI in C++20: SUMMA, Cannon, the 1D ring,
    the JAX sharding rules, 2.5D and Strassen under a cost-model planner, with a C API, a
    ScaLAPACK p?gemm drop-in, a launcher and Python bindings."""

    # No public address is named here: point `git` at the site's mirror of the repository
    # (spack edit shardmm), or build a checkout with `spack develop` / `spack dev-build`.
    git = "file://" + CHECKOUT

    version("main", branch="main")

    variant("scalapack", default=True, description="ScaLAPACK drop-in and comparisons")
    variant("python", default=False, description="Python package (pybind11, NumPy, mpi4py)")
    variant("tests", default=False, description="Build the test suite (GoogleTest)")
    variant("shared", default=True, description="Shared libraries")

    depends_on("cmake@3.25:", type="build")
    depends_on("mpi")
    depends_on("blas")
    depends_on("scalapack", when="+scalapack")
    depends_on("cli11", type="build")
    depends_on("nlohmann-json")
    depends_on("googletest", type="build", when="+tests")
    depends_on("benchmark", type="build", when="+tests")
    depends_on("python@3.9:", when="+python", type=("build", "run"))
    depends_on("py-pybind11", when="+python", type="build")
    depends_on("py-numpy", when="+python", type=("build", "run"))
    depends_on("py-mpi4py", when="+python", type=("build", "run"))

    def cmake_args(self):
        spec = self.spec
        blas = spec["blas"]
        args = [
            self.define("MPI_C_COMPILER", spec["mpi"].mpicc),
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
            self.define("SHARDMM_BLAS_LIBRARIES", blas.libs.joined(";")),
            self.define("SHARDMM_CBLAS_INCLUDE_DIR", blas.headers.directories[0]),
            self.define("SHARDMM_SCALAPACK", "ON" if "+scalapack" in spec else "OFF"),
            self.define_from_variant("SHARDMM_BUILD_TESTS", "tests"),
            self.define_from_variant("SHARDMM_BUILD_BENCHMARKS", "tests"),
            self.define_from_variant("SHARDMM_PYTHON", "python"),
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
        ]
        if "+scalapack" in spec:
            args.append(self.define("SHARDMM_SCALAPACK_NAME", spec["scalapack"].libs[0]))
        if "+python" in spec:
            args.append(self.define("Python3_EXECUTABLE", spec["python"].command.path))
        return args
