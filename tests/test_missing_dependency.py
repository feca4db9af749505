"""A module the project needs, missing from the Python that runs it (an install step skipped,
or another Python than the one it was installed in): one line naming it and the install
command, exit 4 (the environment, not the usage), no traceback, whichever command and wherever the module is first imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from protocol.lifecycle import missing_dependency

RUN_WITHOUT = ("import runpy, sys; sys.modules[sys.argv[1]] = None; sys.argv = ['protocol', *sys.argv[2:]]; "
               "runpy.run_module('protocol', run_name='__main__', alter_sys=True)")


@pytest.mark.parametrize("module, argv", [
    ("rich", ["check", "Holds"]),  # imported when the console is made, after the run's options are read
    ("rich", ["list"]),
    ("attrs", ["check", "Holds"]),  # imported with the command line itself
])
def test_a_missing_dependency_is_one_line_and_exit_4(module, argv, tmp_path):
    done = subprocess.run([sys.executable, "-c", RUN_WITHOUT, module, *argv], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 4, done.stderr
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"protocol: the module {module!r} is not installed in this Python")
    assert "python -m pip install ." in done.stderr


def test_a_missing_module_of_the_project_itself_is_a_bug_shown_whole():
    assert missing_dependency(ModuleNotFoundError("no", name="protocol.render.nowhere")) is None
    assert missing_dependency(ModuleNotFoundError("no", name="scipy.sparse")) is not None
