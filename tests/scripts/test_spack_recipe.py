#!/usr/bin/env python3
"""packaging/spack's recipe against the build it drives (Spack itself is no Debian package):
the recipe is loaded with a stand-in for Spack's recipe API that records its directives, and
cmake_args() is run for each variant combination on a stand-in spec. Checked: the variants
scalapack, python and tests exist; every -D the recipe passes is a cache variable the build
defines (option, set CACHE, find_path/find_library in CMakeLists.txt, cmake/*.cmake) or one of CMake's own (MPI_*, Python3_*,
BUILD_SHARED_LIBS); the dependencies follow the variants."""
import itertools
import os
import re
import sys
import types
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RECIPE = os.path.join(ROOT, "packaging", "spack", "packages", "shardmm", "package.py")
CMAKE_OWN = {"MPI_C_COMPILER", "MPI_CXX_COMPILER", "Python3_EXECUTABLE", "BUILD_SHARED_LIBS"}


def build_cache_variables():
    names = set()
    files = [os.path.join(ROOT, "CMakeLists.txt")]
    files += [os.path.join(ROOT, "cmake", f) for f in os.listdir(os.path.join(ROOT, "cmake")) if f.endswith(".cmake")]
    for f in files:
        text = open(f).read()
        names |= set(re.findall(r"option\((\w+)", text))
        names |= set(re.findall(r"set\((\w+)[^)]*CACHE", text))
        names |= set(re.findall(r"find_(?:path|library|program)\((\w+)", text))
    return names


class Directives:
    def __init__(self):
        self.variants, self.depends = {}, []

    def api(self):
        d = self
        mod = types.ModuleType("spack.package")

        class CMakePackage:
            def define(self, name, value):
                if isinstance(value, bool):
                    value = "ON" if value else "OFF"
                return "-D%s=%s" % (name, value)

            def define_from_variant(self, name, variant):
                return self.define(name, ("+" + variant) in self.spec)

        mod.CMakePackage = CMakePackage
        mod.version = lambda *a, **k: None
        mod.variant = lambda name, **k: d.variants.__setitem__(name, k.get("default"))
        mod.depends_on = lambda spec, **k: d.depends.append((spec, k.get("when")))
        return mod


class Spec:
    """`+name in spec` for the variants on; spec["dep"] gives what cmake_args reads."""

    def __init__(self, on):
        self.on = on

    def __contains__(self, s):
        return s[1:] in self.on if s.startswith("+") else False

    def __getitem__(self, dep):
        return types.SimpleNamespace(
            mpicc="/opt/mpi/bin/mpicc", mpicxx="/opt/mpi/bin/mpicxx",
            libs=_Libs(dep), headers=types.SimpleNamespace(directories=["/opt/%s/include" % dep]),
            command=types.SimpleNamespace(path="/opt/python/bin/python3"))


class _Libs(list):
    def __init__(self, dep):
        super().__init__(["/opt/%s/lib/lib%s.so" % (dep, dep)])

    def joined(self, sep=" "):
        return sep.join(self)


class SpackRecipe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Directives()
        spack = types.ModuleType("spack")
        sys.modules["spack"], sys.modules["spack.package"] = spack, cls.d.api()
        ns = {"__file__": RECIPE, "__name__": "shardmm_recipe"}
        exec(compile(open(RECIPE).read(), RECIPE, "exec"), ns)
        cls.recipe = ns["Shardmm"]
        cls.known = build_cache_variables() | CMAKE_OWN

    def test_variants(self):
        for v in ("scalapack", "python", "tests"):
            self.assertIn(v, self.d.variants)

    def test_every_define_is_a_build_option(self):
        for on in itertools.product(*[[(), (v,)] for v in ("scalapack", "python", "tests")]):
            pkg = self.recipe()
            pkg.spec = Spec({v for t in on for v in t})
            for arg in pkg.cmake_args():
                name = re.match(r"-D(\w+)=", arg).group(1)
                self.assertIn(name, self.known, "%s: not a cache variable of the build" % arg)

    def test_dependencies_follow_variants(self):
        when = {spec.split("@")[0]: w for spec, w in self.d.depends}
        self.assertIsNone(when["mpi"])
        self.assertIsNone(when["blas"])
        self.assertEqual(when["scalapack"], "+scalapack")
        self.assertEqual(when["googletest"], "+tests")
        self.assertEqual(when["py-mpi4py"], "+python")


if __name__ == "__main__":
    unittest.main()
