"""A fuzzer for the command line (issue 24): Hypothesis draws a subcommand, names,
constants, options, an output target (none, a new file, an existing file, a
missing directory, a read-only directory, /dev/full), an encoding, a width and
a signal with its delay; the command runs in a subprocess of its own session,
and every run must keep the invariants:

- no traceback;
- a documented exit code: 0, 1 or 2 (explore: 0 once it serves); 1 after an
  interrupt, and 1 for a search cut short (--max-states 5 or fewer cuts every
  configuration's search);
- a usage error (exit 2) is one line on stderr, and writes nothing;
- an existing output file is unchanged unless the run completed (the one line
  then says nothing of an interrupt, an incomplete run or a file left as it was);
- no temporary file left beside the output;
- no process of the run alive once it has ended.

The constants are small (MaxTime=1, P at most 2), so that each command takes a
fraction of a second; at FUZZ_COMMANDS (500 by default) commands the test
takes a few minutes of CPU. It runs with the slow tests.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_signals import alive_in_session

pytestmark = [pytest.mark.slow, pytest.mark.serial]

ROOT = Path(__file__).resolve().parent.parent
OLD = "the previous run's output\n"
COMMANDS = int(os.environ.get("FUZZ_COMMANDS", "500"))

NAMES = ["HoldsRouted", "HoldsCap", "HoldsCapReconnect", "Holds", "HoldsUnfair", "Nope"]
CONSTANTS = [["-c", "MaxTime=1"], ["-c", "MaxTime=1", "-c", "P=1"], ["-c", "MaxTime=1", "-c", "D=1"],
             ["-c", "P=1000"], ["-c", "Bogus=1"], ["-c", "MaxTime=x"], ["-c", "MaxTime=1", "-c", "MaxTime=2"]]
TARGETS = ["none", "new", "existing", "missing directory", "read-only directory", "/dev/full", "empty name"]
OUTPUT_COMMANDS = {"check", "report", "graph"}
SIGNALS = [None, None, signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def search_options(draw) -> list[str]:
    chosen = []
    if draw(st.booleans()):
        chosen += ["--max-states", str(draw(st.sampled_from([1, 5, 100, 100000])))]
    for flag in ("--stop-on-violation", "--no-liveness", "--symmetry"):
        if draw(st.integers(0, 3)) == 0:
            chosen.append(flag)
    if draw(st.integers(0, 4)) == 0:
        chosen += ["--workers", draw(st.sampled_from(["1", "2", "0", "auto"]))]
    return chosen


@st.composite
def commands(draw) -> dict:
    command = draw(st.sampled_from(["check"] * 6 + ["report"] * 2 + ["simulate"] * 3 + ["graph"] * 2
                                   + ["list", "matrix", "explore", "bench", "nonsense"]))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3))
    argv = [command]
    if command in ("check", "report"):
        argv += names if draw(st.integers(0, 5)) else ["--all"]
        argv += draw(st.sampled_from(CONSTANTS[:3])) if draw(st.integers(0, 5)) else draw(st.sampled_from(CONSTANTS))
        argv += search_options(draw)
        if command == "check":
            argv += draw(st.sampled_from([[], [], ["--json"], ["--format", "markdown"], ["--format", "itf"],
                                          ["--format", "mermaid"], ["--format", "html"], ["--format", "svg"]]))
            argv += draw(st.sampled_from([[], [], ["--no-trace"], ["--full"]]))
    elif command in ("simulate", "graph", "explore"):
        argv += [names[0], *draw(st.sampled_from(CONSTANTS))]
        if command == "simulate":
            argv += ["--walks", str(draw(st.sampled_from([1, 20, 200, 0]))),
                     "--depth", str(draw(st.sampled_from([1, 10, 30])))]
            argv += draw(st.sampled_from([[], ["--workers", "2"], ["--json"], ["--full"], ["--seed", "7"]]))
        elif command == "graph":
            argv += draw(st.sampled_from([[], ["--format", "graphml"], ["--max-states", "10"],
                                          ["--highlight-trace"]]))
        else:
            argv += ["--port", "0"]
    elif command == "matrix":
        argv += ["-c", "MaxTime=1", "-c", "P=1"]
        argv += draw(st.sampled_from([[], ["--json"], ["--format", "markdown"], ["--jobs", "2"]]))
    elif command == "bench":
        argv += ["--config", "HoldsRouted", "--rung", "P=1,D=1,MaxTime=1"]
        argv += draw(st.sampled_from([[], ["--json"], ["--workers", "1,2"]]))
    elif command == "list":
        argv += draw(st.sampled_from([[], ["--json"], ["Holds"]]))
    target = draw(st.sampled_from(TARGETS)) if command in OUTPUT_COMMANDS else "none"
    signum = draw(st.sampled_from(SIGNALS))
    if command == "explore":  # it serves until stopped
        signum = draw(st.sampled_from([signal.SIGINT, signal.SIGTERM, signal.SIGHUP]))
    return {
        "argv": argv,
        "target": target,
        "encoding": draw(st.sampled_from(["utf-8", "utf-8", "ascii", "latin-1"])),
        "columns": draw(st.sampled_from(["60", "80", "200"])),
        "signal": signum,
        "delay": draw(st.floats(0.0, 1.0)),
    }


def output_path(target: str, where: Path) -> str | None:
    if target == "none":
        return None
    if target == "/dev/full":
        return "/dev/full"
    if target == "empty name":
        return ""
    if target == "missing directory":
        return str(where / "missing" / "out.txt")
    if target == "read-only directory":
        readonly = where / "readonly"
        readonly.mkdir()
        (readonly / "out.txt").write_text(OLD)
        readonly.chmod(0o555)
        return str(readonly / "out.txt")
    path = where / "out.txt"
    if target == "existing":
        path.write_text(OLD)
    return str(path)


def catching(process, timeout: float = 20.0) -> bool:
    """Wait until `process` catches SIGTERM (protocol/__main__.py's first act), so that the
    delay counts from there: a signal during the interpreter's own start, before any of
    our code runs, kills it as it would kill any program. False if it ended first."""
    bit = 1 << (signal.SIGTERM - 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with open(f"/proc/{process.pid}/status") as status:
                caught = next(line for line in status if line.startswith("SigCgt:"))
            if int(caught.split()[1], 16) & bit:
                return True
        except (OSError, StopIteration):
            pass
        time.sleep(0.005)
    return False


def run(drawn: dict, where: Path, before_root: Path | None = None):
    """Run the drawn command; `before_root`, a directory searched before the checkout (a
    sitecustomize.py there can take a fix away, to show the fuzzer finds the defect)."""
    argv = list(drawn["argv"])
    output = output_path(drawn["target"], where)
    if output is not None:
        argv += ["--output", output]
    path = os.pathsep.join(str(p) for p in (before_root, ROOT) if p is not None)
    env = {**os.environ, "PYTHONPATH": path, "COLUMNS": drawn["columns"],
           "PYTHONIOENCODING": drawn["encoding"]}
    process = subprocess.Popen([sys.executable, "-m", "protocol", *argv], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        if drawn["signal"] is not None and catching(process):
            try:
                process.communicate(timeout=drawn["delay"])
            except subprocess.TimeoutExpired:
                os.kill(process.pid, drawn["signal"])
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    left = alive_in_session(process.pid)
    deadline = time.monotonic() + 1.0  # "no process of the run alive one second later"
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = alive_in_session(process.pid)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return argv, output, process.returncode, out, err.decode("utf-8", "replace"), left


@settings(max_examples=COMMANDS, deadline=None, derandomize=True, database=None)
@given(commands())
def test_the_command_line_keeps_its_invariants(drawn):
    with tempfile.TemporaryDirectory() as directory:
        where = Path(directory)
        try:
            argv, output, code, out, err, left = run(drawn, where)
            check_invariants(drawn, argv, output, code, err, left, where)
        finally:
            if (where / "readonly").exists():
                (where / "readonly").chmod(0o755)


def check_invariants(drawn, argv, output, code, err, left, where: Path) -> None:
    shown = f"{' '.join(argv)} [{drawn['encoding']}, {drawn['columns']} columns, signal {drawn['signal']}]"
    assert "Traceback" not in err, f"{shown}: {err}"
    assert left == [], f"{shown}: processes {left} alive after the run"
    documented = {0} if argv[0] == "explore" and code == 0 else {0, 1, 2}
    assert code in documented, f"{shown}: exit {code}\n{err}"
    if code == 2:
        assert len(err.splitlines()) == 1, f"{shown}: a usage error of {len(err.splitlines())} lines\n{err}"
    interrupted = "interrupted" in err
    if interrupted:
        assert code == 1, f"{shown}: interrupted, exit {code}"
    cut = [argv[i + 1] for i in range(len(argv) - 1) if argv[i] == "--max-states" and argv[i + 1] in ("1", "5")]
    if cut and argv[0] in ("check", "report") and code != 2:  # every configuration has more states than that
        assert code == 1, f"{shown}: a search cut at {cut[0]} states exited {code}\n{err}"
    partial = [p.name for p in where.rglob("*.partial")]
    assert partial == [], f"{shown}: temporary files left: {partial}"
    if drawn["target"] in ("existing", "read-only directory"):
        kept = Path(output).read_text() == OLD
        if code == 2 or interrupted or "left as it was" in err or "incomplete" in err:
            assert kept, f"{shown}: the existing file was replaced\n{err}"
    if drawn["target"] == "new" and (code == 2 or interrupted or "incomplete" in err):
        assert not Path(output).exists(), f"{shown}: an incomplete run wrote {output}\n{err}"


# Defect 3 of issue 24 as it was: `check --format html` dropped every search option.
DROP_THE_SEARCH_OPTIONS_OF_HTML = """
import protocol.cli.check as check

kept = check.check_options
check.check_options = lambda named, args: {} if args.format == "html" else kept(named, args)
"""

DEFECT_3_EXAMPLES = [  # what the strategy draws (a check into a page, its search cut)
    {"argv": ["check", "HoldsRouted", "-c", "MaxTime=1", "--max-states", "5", "--format", "html"],
     "target": "none", "encoding": "utf-8", "columns": "80", "signal": None, "delay": 0.0},
    {"argv": ["check", "Holds", "HoldsCap", "-c", "MaxTime=1", "--max-states", "1", "--format", "html"],
     "target": "existing", "encoding": "ascii", "columns": "60", "signal": None, "delay": 0.0},
]


@pytest.mark.parametrize("reverted", [False, True], ids=["fixed", "fix reverted"])
def test_the_fuzzer_finds_defect_3_when_its_fix_is_reverted(reverted, tmp_path):
    """Acceptance: the invariants catch `check --format html` dropping --max-states (it explored
    everything and exited 0) on the examples the strategy draws, and pass them with the fix."""
    shim = None
    if reverted:
        shim = tmp_path / "revert"
        shim.mkdir()
        (shim / "sitecustomize.py").write_text(DROP_THE_SEARCH_OPTIONS_OF_HTML)
    for number, drawn in enumerate(DEFECT_3_EXAMPLES):
        where = tmp_path / str(number)
        where.mkdir()
        argv, output, code, out, err, left = run(drawn, where, before_root=shim)
        if reverted:
            with pytest.raises(AssertionError, match="a search cut at"):
                check_invariants(drawn, argv, output, code, err, left, where)
        else:
            check_invariants(drawn, argv, output, code, err, left, where)
