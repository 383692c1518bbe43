"""The PEP 517 build backend of `pip install .` (pyproject.toml at the repository root).

It builds the Python package with the project's CMake for the interpreter that runs pip and
packs it as a wheel: shardmm/*.py, the module shardmm/_native*.so and libshardmm.so next to it
(the module's RUNPATH has $ORIGIN). Standard library and cmake only, so pip's isolated build
environment needs no download (`requires = []`): it works offline, with Debian's pip alone.

Settings (pip --config-settings KEY=VALUE):
  build-dir=DIR     the CMake build tree (relative: to the repository). Default build-pip/,
                    configured here (Release, no tests or benchmarks). An existing tree of
                    this source (`cmake -B build`, say) is reused as it is configured: only
                    the module's target is built, and its interpreter must be this one.
  cmake-args=ARGS   more options for a configure made here (e.g. "-DSHARDMM_NATIVE=OFF").
Environment: SHARDMM_PIP_BUILD_DIR (as build-dir), CMAKE_BUILD_PARALLEL_LEVEL (jobs).
"""

import base64
import csv
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = ".shardmm-pip"  # in a build tree this backend configured (it may reconfigure it)
COMPONENT = "python_wheel"  # python/CMakeLists.txt: the package as the wheel holds it


class BuildError(RuntimeError):
    pass


def _version():
    m = re.search(r"project\(shardmm VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    if not m:
        raise BuildError("no `project(shardmm VERSION ...)` in CMakeLists.txt")
    return m.group(1)


def _tag():
    """The wheel's tag for this interpreter: cp311-cp311-linux_x86_64."""
    if sys.implementation.name != "cpython":
        raise BuildError(f"shardmm's module is built for CPython, not {sys.implementation.name}")
    py = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    return f"{py}-{py}-" + re.sub(r"[-.]", "_", sysconfig.get_platform())


def _env():
    """The environment for cmake: without pip's isolation (its PYTHONPATH overlay hides the
    interpreter's own packages, which the configure step imports: numpy, mpi4py)."""
    env = dict(os.environ)
    for key in ("PYTHONPATH", "PYTHONNOUSERSITE"):
        env.pop(key, None)
    return env


def _run(cmd):
    print("shardmm_build:", " ".join(shlex.quote(str(c)) for c in cmd), flush=True)
    rc = subprocess.run([str(c) for c in cmd], env=_env(), check=False).returncode
    if rc != 0:
        raise BuildError(f"{Path(str(cmd[0])).name} failed (exit {rc}); its output is above "
                         "(pip shows it with -v)")


def _cache(build):
    """The CMakeCache.txt entries of a build tree: {name: value}."""
    entries = {}
    for line in (build / "CMakeCache.txt").read_text(errors="replace").splitlines():
        m = re.match(r"([A-Za-z0-9_]+):[A-Z]+=(.*)", line)
        if m:
            entries[m.group(1)] = m.group(2)
    return entries


def _build_dir(settings):
    value = settings.get("build-dir") or os.environ.get("SHARDMM_PIP_BUILD_DIR") or "build-pip"
    path = Path(value)
    return path if path.is_absolute() else ROOT / path


def _configure(build, settings):
    """Configures a new tree (or one this backend made) for sys.executable; checks a tree
    configured by someone else: this source, the Python package on."""
    if (build / "CMakeCache.txt").exists() and not (build / MARKER).exists():
        cache = _cache(build)
        home = Path(cache.get("CMAKE_HOME_DIRECTORY", "")).resolve()
        if home != ROOT:
            raise BuildError(f"build-dir {build} is a build tree of {home}, not of {ROOT}")
        if cache.get("SHARDMM_PYTHON", "OFF").upper() not in ("ON", "1", "TRUE", "YES"):
            raise BuildError(f"build-dir {build} has SHARDMM_PYTHON off (reconfigure it with "
                             "-DSHARDMM_PYTHON=ON, or pass another build-dir)")
        return
    build.mkdir(parents=True, exist_ok=True)
    (build / MARKER).write_text("configured by python/build_backend/shardmm_build.py\n")
    _run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
          "-DSHARDMM_BUILD_TESTS=OFF", "-DSHARDMM_BUILD_BENCHMARKS=OFF", "-DSHARDMM_PYTHON=ON",
          f"-DPython3_EXECUTABLE={sys.executable}", *shlex.split(settings.get("cmake-args", ""))])


def _stage(build, staging):
    """Builds the module (and the library) and installs the wheel's files into staging/."""
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    _run(["cmake", "--build", build, "--target", "shardmm_python", "--parallel", jobs])
    _run(["cmake", "--install", build, "--component", COMPONENT, "--prefix", staging])
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    modules = sorted(p.name for p in (staging / "shardmm").glob("_native*.so"))
    if modules != ["_native" + suffix]:
        interp = _cache(build).get("Python3_EXECUTABLE", "another interpreter")
        raise BuildError(f"build-dir {build} builds the module for {interp} ({modules}), not "
                         f"for {sys.executable} (_native{suffix}): pass another build-dir")


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _metadata(version):
    return (f"Metadata-Version: 2.1\nName: shardmm\nVersion: {version}\n"
            "Summary: Distributed dense matrix multiplication over MPI, from mpi4py + NumPy\n"
            "License: see the repository\nRequires-Dist: numpy\nRequires-Dist: mpi4py\n")


def _write_wheel(path, staging, version, tag):
    """The wheel at `path`: staging/shardmm/* and the .dist-info (METADATA, WHEEL, RECORD)."""
    info = f"shardmm-{version}.dist-info"
    files = {f"shardmm/{p.name}": p.read_bytes()
             for p in sorted((staging / "shardmm").iterdir()) if p.is_file()}
    files[f"{info}/METADATA"] = _metadata(version).encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: shardmm_build\n"
                              f"Root-Is-Purelib: false\nTag: {tag}\n").encode()
    files[f"{info}/top_level.txt"] = b"shardmm\n"
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data in files.items():
        writer.writerow([name, _digest(data), len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    files[f"{info}/RECORD"] = record.getvalue().encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            entry.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)


# ---------------------------------------------------------------- PEP 517 hooks
def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    settings = dict(config_settings or {})
    version, tag = _version(), _tag()
    build = _build_dir(settings)
    try:
        _configure(build, settings)
        with tempfile.TemporaryDirectory(prefix="shardmm-wheel-") as tmp:
            staging = Path(tmp)
            _stage(build, staging)
            name = f"shardmm-{version}-{tag}.whl"
            _write_wheel(Path(wheel_directory) / name, staging, version, tag)
    except BuildError as e:
        sys.exit(f"shardmm_build: error: {e}")
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files of the repository (git archive) as shardmm-VERSION.tar.gz."""
    name = f"shardmm-{_version()}"
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        sys.exit("shardmm_build: error: an sdist is made from a git checkout (git archive)")
    out = Path(sdist_directory) / f"{name}.tar.gz"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar.gz", f"--prefix={name}/",
                    "-o", str(out), "HEAD"], check=True)
    return out.name
