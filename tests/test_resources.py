"""Issue 32, point 3: resource limits give one line, and every child is reaped before the
command exits. Each case starts a command of its own (in a session of its own, to find its
children), so the module runs with the slow, serial tests."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.serial]

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 300_000 * 1024  # `ulimit -v 300000`


def in_session(session: int) -> list[tuple[int, str]]:
    """Every process of `session` (zombies included: a child not reaped is one), with its state."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == session:
                    with open(f"/proc/{entry}/stat") as stat:
                        found.append((int(entry), stat.read().rsplit(")", 1)[1].split()[0]))
            except (OSError, IndexError):
                pass
    return found


def limited(*argv, timeout: float = 180):
    """Run `protocol ARGV` under the memory limit; (exit code, stderr, seconds). A run that
    outlives `timeout` (the hang of the issue: BLAS's threads retrying malloc, deaf to
    SIGTERM) is killed and fails the test."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))

    env = {key: value for key, value in os.environ.items()
           if key not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update(PYTHONPATH=str(ROOT), COLUMNS="80")
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "protocol", *argv], cwd=ROOT, env=env, text=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit,
                               start_new_session=True)
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.communicate()
        pytest.fail(f"{' '.join(argv)} under ulimit -v 300000 did not end in {timeout} s")
    return process.returncode, err, time.monotonic() - started


@pytest.mark.parametrize("argv", [
    ("check", "HoldsRouted", "-c", "P=3", "-c", "MaxTime=3", "--no-trace"),  # the default engine, liveness on
    ("check", "Holds", "-c", "P=3", "-c", "D=2", "--no-trace", "--engine", "packed"),
], ids=["vector", "packed"])
def test_out_of_memory_is_one_line_and_exit_4_never_a_hang(argv):
    code, err, _ = limited(*argv)
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert code == 4 and "out of memory" in err, (code, err)  # the environment


def test_a_run_that_fits_the_limit_still_decides_liveness():
    code, err, _ = limited("check", "Holds", "--no-trace")
    assert (code, err) == (0, "")


def test_matrix_with_workers_reaps_every_child_before_it_exits():
    """Issue 32: `matrix --jobs 2` left its forkserver and resource tracker running, their
    workers defunct and reparented, for one to three seconds after the command exited."""
    process = subprocess.Popen([sys.executable, "-m", "protocol", "matrix", "-c", "MaxTime=1", "-c", "P=1",
                                "--jobs", "2"], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    _, err = process.communicate(timeout=180)
    left = in_session(process.pid)  # at once: not a moment later
    for pid, _ in left:
        os.kill(pid, 9)
    assert process.returncode == 0, err
    assert left == [], f"processes of the run left after it exited: {left}"


def test_too_few_file_descriptors_for_the_workers_is_one_line():
    """Issue 32 (low): `ulimit -n 12` with `matrix --jobs 2` ended in a traceback and left the
    multiprocessing's `pymp-*` directory behind."""
    import tempfile

    def few_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (12, 12))

    before = {p.name for p in Path(tempfile.gettempdir()).glob("pymp-*")}
    done = subprocess.run([sys.executable, "-m", "protocol", "matrix", "-c", "MaxTime=1", "-c", "P=1", "--jobs", "2"],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          preexec_fn=few_files, timeout=180)
    assert done.returncode == 4 and done.stderr.count("\n") == 1, done.stderr  # the environment
    assert "Too many open files" in done.stderr and "--jobs" in done.stderr
    assert {p.name for p in Path(tempfile.gettempdir()).glob("pymp-*")} <= before
