"""What the package says about the interpreter it was built for (python.pip_install tests the
pip install itself; python.hang_* the watchdog)."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import shardmm
from shardmm import _build


def test_built_for_this_interpreter():
    assert os.path.realpath(_build.PYTHON) == os.path.realpath(sys.executable)
    assert _build.VERSION.startswith(f"{sys.version_info[0]}.{sys.version_info[1]}")
    assert _build.hint(ImportError("x")) == "x"  # the right interpreter: the error as it is


def test_wrong_interpreter_names_the_right_one(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/opt/other/bin/python3")
    text = _build.hint(ImportError("No module named 'numpy'"))
    assert text.startswith("No module named 'numpy': shardmm's module was built for "
                           f"{_build.PYTHON} (Python {_build.VERSION}), and this is "
                           "/opt/other/bin/python3")
    assert "-DPython3_EXECUTABLE=/opt/other/bin/python3" in text


def test_import_failure_carries_the_hint():
    """A copy of the package without its module, imported by an interpreter that calls itself
    another one: the ImportError names the interpreter the module was built for."""
    tmp = Path(tempfile.mkdtemp(prefix="shardmm-hint-"))  # this rank's own
    pkg = tmp / "shardmm"
    pkg.mkdir()
    here = os.path.dirname(shardmm.__file__)
    for name in ("__init__.py", "_build.py"):
        (pkg / name).write_text(open(os.path.join(here, name)).read())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_"))}
    env["PYTHONPATH"] = str(tmp)
    code = ("import sys, os; sys.executable = '/opt/other/bin/python3'\n"
            "try:\n    import shardmm\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp, capture_output=True,
                         text=True)  # cwd: not a directory holding the real package
    shutil.rmtree(tmp)
    assert f"shardmm's module was built for {_build.PYTHON}" in out.stdout, out
