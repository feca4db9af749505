"""Exit codes by class (issue 57; protocol/exits.py, docs/checker.md "Exit codes").

One test per class, run as a CI runs the tool (a subprocess of `python -m protocol`), and
one per state of the streams: standard error closed (`2>&-`) or on a full device
(`2>/dev/full`), standard output closed or read by a reader that leaves (`| head -1`).
A usage error never reaches standard output, whatever standard error is.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import cli  # noqa: F401  (a fixture)
from protocol.exits import (
    EXIT_AS_EXPECTED, EXIT_DEFECT, EXIT_ENVIRONMENT, EXIT_INCOMPLETE, EXIT_NOT_AS_EXPECTED, EXIT_USAGE, interrupted_exit,
)

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}


def protocol(*argv, stderr="pipe", stdout="pipe", timeout=120):
    """Run `python -m protocol ARGV`: (exit code, stdout, stderr). `stderr` and `stdout` are
    "pipe", "closed" (as a shell's `2>&-`) or "full" (/dev/full)."""
    closed = [fd for fd, how in ((1, stdout), (2, stderr)) if how == "closed"]
    full = open("/dev/full", "w")
    try:
        streams = {how: {"pipe": subprocess.PIPE, "closed": None, "full": full}[how] for how in (stdout, stderr)}
        done = subprocess.run([sys.executable, "-m", "protocol", *argv], cwd=ROOT, env=ENV, text=True,
                              stdin=subprocess.DEVNULL, stdout=streams[stdout], stderr=streams[stderr],
                              preexec_fn=(lambda: [os.close(fd) for fd in closed]) if closed else None,
                              timeout=timeout)
    finally:
        full.close()
    return done.returncode, done.stdout or "", done.stderr or ""


def one_line(err: str, *words: str) -> None:
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.startswith("protocol: "), err
    for word in words:
        assert word in err, err


def test_the_codes_are_distinct_and_the_interrupts_are_the_shells():
    codes = [EXIT_AS_EXPECTED, EXIT_NOT_AS_EXPECTED, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_ENVIRONMENT, EXIT_DEFECT]
    assert codes == [0, 1, 2, 3, 4, 70]
    assert [interrupted_exit(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)] == [130, 143, 129]
    assert interrupted_exit(None) == 130  # a KeyboardInterrupt no signal handler recorded is Ctrl-C's


# ------------------------------------------------------------------ one test per class


def test_as_expected_is_0():
    code, out, err = protocol("check", "HoldsRouted", "-c", "MaxTime=1", "--no-trace")
    assert (code, err) == (EXIT_AS_EXPECTED, "") and "as expected" in out


def test_not_as_expected_is_1():
    # MaxTime=0: no time passes, so the states Holds requires (a published since advancing) are never reached
    code, out, err = protocol("check", "Holds", "-c", "MaxTime=0", "--no-trace")
    assert (code, err) == (EXIT_NOT_AS_EXPECTED, "") and "NOT as expected" in out


def test_usage_is_2_one_line_and_nothing_on_stdout():
    code, out, err = protocol("check", "Nope")
    assert (code, out) == (EXIT_USAGE, "")
    one_line(err, "unknown configuration 'Nope'")


def test_a_search_cut_short_is_3():
    code, out, err = protocol("check", "Holds", "--max-states", "100", "--json")
    assert (code, err) == (EXIT_INCOMPLETE, "")
    assert '"complete": false' in out


def test_stopping_at_the_expected_violation_is_3(cli):
    code, out, err = cli("check", "HoldsRouted", "--stop-on-violation", "--no-trace")
    assert code == EXIT_INCOMPLETE  # I1 as expected; the other properties are unknown


def test_a_run_cut_short_that_decided_a_verdict_not_as_expected_is_1(cli, monkeypatch):
    """Cut short, but what it decided is already wrong: no longer run can make it as expected."""
    import attrs

    import protocol.cli.common as common
    from protocol.configurations.named import named_configurations

    def expect_too_long(name):
        named = named_configurations()[name]
        return attrs.evolve(named, expect={prop: length + 1 for prop, length in named.expect})

    monkeypatch.setattr(common, "lookup", expect_too_long)
    code, out, err = cli("check", "HoldsCap", "--stop-on-violation", "--no-trace")
    assert code == EXIT_NOT_AS_EXPECTED and "expected 8" in out


def test_a_run_with_a_configuration_skipped_is_3(cli, monkeypatch):
    """Under --all, a configuration the options cannot check is skipped: it has no verdict."""
    import protocol.cli.common as common
    from protocol.configurations.named import named_configurations

    two = {name: named_configurations()[name] for name in ("HoldsRouted", "HoldsCap")}
    monkeypatch.setattr(common, "named_configurations", lambda: two)
    code, out, err = cli("check", "--all", "-c", "MaxTime=1", "--symmetry", "--no-trace")
    assert code == EXIT_INCOMPLETE and "skipped HoldsCap" in err, err
    code, out, err = cli("check", "HoldsRouted", "HoldsCap", "-c", "MaxTime=1", "--symmetry", "--no-trace")
    assert code == EXIT_USAGE  # named, it is refused before anything runs


def start(*argv):
    return subprocess.Popen([sys.executable, "-m", "protocol", *argv], cwd=ROOT, env=ENV, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def caught(process, timeout: float = 20.0) -> None:
    """Wait until the run has its handlers (protocol/__main__.py's first act)."""
    bit = 1 << (signal.SIGTERM - 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{process.pid}/status") as status:
            mask = next(line for line in status if line.startswith("SigCgt:"))
        if int(mask.split()[1], 16) & bit:
            return
        time.sleep(0.01)


@pytest.mark.slow
@pytest.mark.serial
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_interrupted_is_128_plus_the_signal(signum):
    process = start("check", "Holds", "-c", "D=2", "-c", "MaxTime=3", "--no-trace")
    try:
        caught(process)
        time.sleep(1.0)  # well into the search
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 128 + signum
    one_line(err, "interrupted")


def test_an_interrupt_is_130_in_process(cli, monkeypatch):
    import protocol.run

    def interrupted(named, **options):
        raise KeyboardInterrupt

    monkeypatch.setattr(protocol.run, "check", interrupted)
    code, out, err = cli("check", "HoldsRouted")
    assert code == 130 and "interrupted (Ctrl-C)" in err


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_a_full_disk_is_4():
    code, out, err = protocol("check", "HoldsRouted", "-c", "MaxTime=1", "--output", "/dev/full")
    assert code == EXIT_ENVIRONMENT
    one_line(err, "No space left on device")


def check_raising(cli, monkeypatch, error: Exception):
    """`check HoldsRouted` with the search raising `error`: (exit code, stdout, stderr)."""
    import protocol.run

    def raising(named, **options):
        raise error

    monkeypatch.setattr(protocol.run, "check", raising)
    return cli("check", "HoldsRouted")


def test_a_lost_worker_is_4(cli, monkeypatch):
    from protocol.engine import WorkerLost

    lost = WorkerLost("worker 1 (pid 4242) died (killed by signal 9): the run has no verdict")
    code, out, err = check_raising(cli, monkeypatch, lost)
    assert code == EXIT_ENVIRONMENT and out == ""
    one_line(err, "worker 1")


def test_a_defect_of_the_tool_is_70_with_its_traceback(cli, monkeypatch):
    """A crash exited 1, the code of a model that changed: a CI could not tell them apart."""
    code, out, err = check_raising(cli, monkeypatch, RuntimeError("a defect no handler expects"))
    assert code == EXIT_DEFECT and out == ""
    assert "Traceback" in err and err.rstrip().endswith("RuntimeError: a defect no handler expects"), err


def test_a_missing_module_is_4(tmp_path):
    script = ("import runpy, sys; sys.modules['rich'] = None; sys.argv = ['protocol', 'list']; "
              "runpy.run_module('protocol', run_name='__main__', alter_sys=True)")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stdout) == (EXIT_ENVIRONMENT, "")
    one_line(done.stderr, "'rich' is not installed")


# ------------------------------------------------------------------ every subcommand, through the one place

SUBCOMMANDS = ["check", "list", "pin", "simulate", "matrix", "graph", "bench", "docs", "report", "explore",
               "validate", "generate"]


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_s_usage_error_is_2(cli, command):
    code, out, err = cli(command, "--no-such-option")
    assert (code, out) == (EXIT_USAGE, "")
    one_line(err)  # the option, or the argument the command lacks first


def test_the_subcommands_listed_are_every_subcommand():
    from protocol.cli.main import SUBCOMMANDS as ALL

    assert sorted(SUBCOMMANDS) == sorted(ALL)


# ------------------------------------------------------------------ every state of the streams


@pytest.mark.parametrize("stderr", ["closed", "full"])
def test_a_usage_error_with_stderr_closed_or_full_is_2_and_silent(stderr):
    """With stderr closed, Python's print(file=None) wrote the line to standard output, into
    the stream a --json consumer parses; on a full device the failed write made it exit 1."""
    code, out, _ = protocol("check", "Nope", "--json", stderr=stderr)
    assert (code, out) == (EXIT_USAGE, "")


@pytest.mark.parametrize("stderr", ["closed", "full"])
@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_a_run_with_stderr_closed_or_full_keeps_its_code_and_its_output(stderr, tmp_path):
    target = tmp_path / "out.txt"
    code, out, _ = protocol("check", "Holds", "--max-states", "100", "--json", "--output", str(target), stderr=stderr)
    assert (code, out) == (EXIT_INCOMPLETE, "")  # its line ("nothing written") lost, its code kept
    assert not target.exists()
    code, out, _ = protocol("check", "HoldsRouted", "-c", "MaxTime=1", "--json", stderr=stderr)
    assert code == EXIT_AS_EXPECTED and '"as_expected": true' in out


@pytest.mark.parametrize("stderr", ["closed", "full"])
@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_an_environment_failure_with_stderr_closed_or_full_is_4(stderr):
    code, out, _ = protocol("check", "HoldsRouted", "-c", "MaxTime=1", "--output", "/dev/full", stderr=stderr)
    assert (code, out) == (EXIT_ENVIRONMENT, "")


def test_stdout_closed_is_4_in_one_line():
    code, out, err = protocol("list", stdout="closed")
    assert code == EXIT_ENVIRONMENT
    one_line(err, "standard output: it is closed")


def test_stdout_full_is_4_in_one_line():
    code, out, err = protocol("list", stdout="full")
    assert code == EXIT_ENVIRONMENT
    one_line(err, "No space left on device")


def piped_to_head(*argv):
    """`python -m protocol ARGV | head -1`: (the command's exit code, head's line, stderr)."""
    writer = subprocess.Popen([sys.executable, "-m", "protocol", *argv], cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    head = subprocess.run(["head", "-1"], stdin=writer.stdout, capture_output=True, timeout=120)
    writer.stdout.close()
    err = writer.stderr.read().decode()
    writer.wait(timeout=120)
    return writer.returncode, head.stdout.decode(), err


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_graph_into_head_is_4_without_a_word():
    """The graph (600 kB) is more than the pipe holds: the reader left before the end. One write
    of it all was cut by the kernel where the pipe was full, without an error, and graph exited 0."""
    code, line, err = piped_to_head("graph", "Holds", "-c", "MaxTime=1")
    assert (code, line, err) == (EXIT_ENVIRONMENT, 'digraph "Holds" {\n', "")


@pytest.mark.slow
def test_report_all_into_head_is_4_without_a_word():
    code, line, err = piped_to_head("report", "--all", "-c", "MaxTime=1")
    assert (code, line, err) == (EXIT_ENVIRONMENT, "<!DOCTYPE html>\n", "")


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_what_fits_the_pipe_before_the_reader_leaves_was_delivered():
    """`check HoldsRouted | head -1`: the whole output was taken by the pipe before the reader
    left, so nothing was lost to the writer's knowledge, and the run's own code stands."""
    code, line, err = piped_to_head("check", "HoldsRouted", "-c", "MaxTime=1", "--no-trace")
    assert (code, err) == (EXIT_AS_EXPECTED, "") and "HoldsRouted" in line
