"""A fuzzer for the command line (issue 24): Hypothesis draws a subcommand, names,
constants, options, an output target (none, a new file, an existing file, a
missing directory, a read-only directory, /dev/full), an encoding, a width and
a signal with its delay; the command runs in a subprocess of its own session,
and every run must keep the invariants:

- no traceback;
- a documented exit code (protocol/exits.py): 0, 1, 2, 3 or 4 (explore: 0 once it
  serves); 128 + the signal after an interrupt, and 3 for a search cut short
  (--max-states 5 or fewer cuts every configuration's search; 1 where what it
  did decide is not as expected);
- a usage error (exit 2) is one line on stderr, and writes nothing;
- an existing output file is unchanged unless the run completed (the one line
  then says nothing of an interrupt, an incomplete run or a file left as it was),
  or it is a page (`report`, `--format html`) cut short by --max-states, which is
  written marked INCOMPLETE (issue 57);
- no temporary file left beside the output;
- no process of the run alive once it has ended.

Issue 32 adds the terminal's every state: COLUMNS drawn from unset, 0, 1, 20, 60, 80,
200 and "abc"; FORCE_COLOR and NO_COLOR; a closed standard output (`>&-`); and an
--output that is a symbolic link. Their invariants:

- no escape code in an --output file, whatever FORCE_COLOR says, nor in standard output
  (a pipe here) unless FORCE_COLOR asks for colour (issue 57), and then no cursor movement;
- a command that exits 0 writing to standard output wrote something (COLUMNS=0 lost it all);
- a closed standard output is one line and exit 4, unless the command wrote only its --output;
- a symbolic link given as --output stays a link, its target gets the text.

The constants are small (MaxTime=1, P at most 2), so that each command takes a
fraction of a second. The number of commands follows the Hypothesis profile
(tests/conftest.py): a few under `quick`, 500 under `ci`, which .ci/run gives
this module; FUZZ_COMMANDS overrides both. It runs with the slow tests.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from test_signals import alive_in_session

pytestmark = [pytest.mark.slow, pytest.mark.serial]

ROOT = Path(__file__).resolve().parent.parent
OLD = "the previous run's output\n"
BUDGET = {"quick": 25, "ci": 500}  # commands per Hypothesis profile
COMMANDS = int(os.environ.get("FUZZ_COMMANDS") or BUDGET.get(os.environ.get("HYPOTHESIS_PROFILE", "quick"), 25))
COLUMNS = [None, "0", "1", "20", "60", "80", "200", "abc"]
COLOURS = [{}, {}, {"FORCE_COLOR": "1"}, {"NO_COLOR": "1"}, {"FORCE_COLOR": "1", "NO_COLOR": "1"}]

NAMES = ["HoldsRouted", "HoldsCap", "HoldsCapReconnect", "Holds", "HoldsUnfair", "Nope"]
CONSTANTS = [["-c", "MaxTime=1"], ["-c", "MaxTime=1", "-c", "P=1"], ["-c", "MaxTime=1", "-c", "D=1"],
             ["-c", "P=1000"], ["-c", "Bogus=1"], ["-c", "MaxTime=x"], ["-c", "MaxTime=1", "-c", "MaxTime=2"]]
TARGETS = ["none", "new", "existing", "missing directory", "read-only directory", "/dev/full", "empty name",
           "symlink", "long name"]
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
                                   + ["list", "matrix", "explore", "bench", "validate", "nonsense"]))
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
        argv += draw(st.sampled_from([[], ["--json"], ["--workers", "1,2"], ["--repeat", "2"]]))
    elif command == "validate":
        argv += [draw(st.sampled_from(["docs/examples/multiplexer.jsonl", "-", "README.md", "docs", "nope.jsonl"]))]
        argv += draw(st.sampled_from([[], ["--json"], ["--full"], ["--config", "HoldsRouted"]]))
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
        "columns": draw(st.sampled_from(COLUMNS)),
        "colour": draw(st.sampled_from(COLOURS)),
        "closed": draw(st.integers(0, 5)) == 0,  # standard output closed (`>&-`)
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
    if target == "long name":  # issue 57: over 255 bytes, an OSError traceback
        return str(where / ("a" * 256))
    if target == "symlink":
        (where / "real.txt").write_text(OLD)
        (where / "out.txt").symlink_to(where / "real.txt")
        return str(where / "out.txt")
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
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "FORCE_COLOR", "NO_COLOR")}
    env.update({"PYTHONPATH": path, "PYTHONIOENCODING": drawn["encoding"], **drawn.get("colour", {})})
    if drawn["columns"] is not None:
        env["COLUMNS"] = drawn["columns"]
    closed = drawn.get("closed", False)
    process = subprocess.Popen([sys.executable, "-m", "protocol", *argv], cwd=ROOT, env=env,
                               stdin=subprocess.DEVNULL, stdout=None if closed else subprocess.PIPE,
                               stderr=subprocess.PIPE,
                               start_new_session=True, preexec_fn=(lambda: os.close(1)) if closed else None)
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
    return argv, output, process.returncode, out or b"", err.decode("utf-8", "replace"), left


def corpus(test):
    """`test` with every CORPUS entry as an explicit example."""
    for entry in reversed(CORPUS):
        test = example(entry)(test)
    return test


def corpus_entry(argv, target="none", columns="80", colour=None, closed=False, encoding="utf-8") -> dict:
    return {"argv": argv, "target": target, "encoding": encoding, "columns": columns, "colour": colour or {},
            "closed": closed, "signal": None, "delay": 0.0}


# Issue 32's defects, each a command the fuzzer runs first (the regression corpus).
CORPUS = [
    corpus_entry(["check", "HoldsRouted", "-c", "MaxTime=1", "--no-trace"], columns="0"),  # 0 bytes, exit 0
    corpus_entry(["check", "HoldsRouted", "-c", "MaxTime=1"], target="new", columns="0"),  # no file written
    corpus_entry(["list"], columns="1"),  # one character a line
    corpus_entry(["check", "HoldsCap", "-c", "MaxTime=1"], target="existing", colour={"FORCE_COLOR": "1"}),
    corpus_entry(["list"], closed=True),  # AttributeError: 'NoneType' object has no attribute 'isatty'
    corpus_entry(["check", "HoldsRouted", "-c", "MaxTime=1"], target="symlink"),  # the link replaced
    corpus_entry(["matrix", "-c", "MaxTime=1", "-c", "P=1"], columns=None),  # cut cells in a pipe
    corpus_entry(["matrix", "-c", "MaxTime=1", "-c", "P=1", "--jobs", "2"], columns="abc"),  # children left
    corpus_entry(["check", "Holds", "-c", "MaxTime=1"], columns="40"),  # low: the "expected" column dropped
    corpus_entry(["validate", "-"]),  # low: `-` was a file name
    # Issue 57: an --output name over 255 bytes gave an OSError traceback
    corpus_entry(["check", "HoldsRouted", "-c", "MaxTime=1"], target="long name"),
    corpus_entry(["report", "HoldsRouted", "-c", "MaxTime=1"], target="long name"),
    corpus_entry(["graph", "HoldsRouted", "-c", "MaxTime=1"], target="long name"),
    # Issue 57's smaller ones: a page cut short by --max-states written nowhere, colour asked of a pipe,
    # bench at 60 columns and with two worker counts, matrix with its workers (ended as a group in
    # tests/test_small_items.py)
    corpus_entry(["report", "HoldsRouted", "-c", "MaxTime=1", "--max-states", "5"], target="new"),
    corpus_entry(["report", "HoldsRouted", "-c", "MaxTime=1", "--max-states", "5"], target="existing"),
    corpus_entry(["check", "HoldsCap", "-c", "MaxTime=1"], colour={"FORCE_COLOR": "1"}),
    corpus_entry(["list"], colour={"FORCE_COLOR": "1", "NO_COLOR": "1"}),
    corpus_entry(["bench", "--config", "HoldsRouted", "--rung", "P=1,D=1,MaxTime=1", "--workers", "1,2"],
                 columns="60"),
    corpus_entry(["matrix", "-c", "MaxTime=1", "-c", "P=1", "--jobs", "2"], colour={"FORCE_COLOR": "1"}),
]


@settings(max_examples=COMMANDS, deadline=None, derandomize=True, database=None)
@corpus
@given(commands())
def test_the_command_line_keeps_its_invariants(drawn):
    with tempfile.TemporaryDirectory() as directory:
        where = Path(directory)
        try:
            argv, output, code, out, err, left = run(drawn, where)
            check_invariants(drawn, argv, output, code, err, left, where, out)
        finally:
            if (where / "readonly").exists():
                (where / "readonly").chmod(0o755)


def check_invariants(drawn, argv, output, code, err, left, where: Path, out: bytes = b"") -> None:
    shown = (f"{' '.join(argv)} [{drawn['encoding']}, COLUMNS={drawn['columns']}, {drawn.get('colour', {})}, "
             f"{'stdout closed, ' if drawn.get('closed') else ''}signal {drawn['signal']}]")
    assert "Traceback" not in err, f"{shown}: {err}"
    assert left == [], f"{shown}: processes {left} alive after the run"
    documented = {0} if argv[0] == "explore" and code == 0 else {0, 1, 2, 3, 4, 129, 130, 143}
    assert code in documented, f"{shown}: exit {code}\n{err}"
    if code == 2:
        assert len(err.splitlines()) == 1, f"{shown}: a usage error of {len(err.splitlines())} lines\n{err}"
    interrupted = "interrupted" in err
    if interrupted:
        assert code == 128 + drawn["signal"], f"{shown}: interrupted, exit {code}"
    cut = [argv[i + 1] for i in range(len(argv) - 1) if argv[i] == "--max-states" and argv[i + 1] in ("1", "5")]
    if cut and argv[0] in ("check", "report") and code not in (2, 4) and not interrupted:
        # every configuration has more states than that: cut short, or not as expected in what it decided
        assert code in (1, 3), f"{shown}: a search cut at {cut[0]} states exited {code}\n{err}"
    partial = [p.name for p in where.rglob("*.partial")]
    assert partial == [], f"{shown}: temporary files left: {partial}"
    if drawn["target"] in ("existing", "read-only directory"):
        kept = Path(output).read_text() == OLD
        if code == 2 or interrupted or "left as it was" in err or "incomplete" in err:
            assert kept, f"{shown}: the existing file was replaced\n{err}"
    if drawn["target"] == "new" and (code == 2 or interrupted or "incomplete" in err):
        assert not Path(output).exists(), f"{shown}: an incomplete run wrote {output}\n{err}"
    page = argv[0] == "report" or "html" in argv
    if page and cut and code in (1, 3) and output and drawn["target"] in ("new", "existing", "symlink") \
            and "protocol: skipped " not in err:  # a page leaving out a skipped configuration is not written
        # issue 57: a page cut short by the user's bound is written, marked (its stdout got it too)
        assert "marked INCOMPLETE" in err and "INCOMPLETE" in Path(output).read_text(), f"{shown}\n{err}"
    check_terminal_invariants(drawn, argv, output, code, err, out, shown)


# What would redraw a pipe's text in place (a progress bar): cursor movement, a hidden cursor, a return.
CURSOR_MOVES = re.compile(rb"\x1b\[[0-9;]*[ABCDEFGHJKST]|\x1b\[\?25[lh]|\r")


def check_terminal_invariants(drawn, argv, output, code, err, out: bytes, shown: str) -> None:
    """Issue 32: the terminal model's invariants (the module's docstring)."""
    colour = drawn.get("colour", {})
    if colour.get("FORCE_COLOR") and not colour.get("NO_COLOR"):  # issue 57: colour in a CI log, no redraw
        assert not CURSOR_MOVES.search(out), f"{shown}: cursor movement in a pipe\n{out[:200]!r}"
    else:
        assert b"\x1b" not in out, f"{shown}: escape codes in a pipe\n{out[:200]!r}"
    written = Path(output) if output and drawn["target"] in ("new", "existing", "symlink") else None
    if written is not None and written.exists():
        assert "\x1b" not in written.read_text(errors="replace"), f"{shown}: escape codes in {output}"
    if drawn["target"] == "symlink":
        assert Path(output).is_symlink(), f"{shown}: the link {output} was replaced\n{err}"
    quiet = argv[0] == "explore" or output is not None  # explore serves; --output takes the text
    if code == 0 and not drawn.get("closed") and drawn["signal"] is None and not quiet:
        assert out.strip(), f"{shown}: exit 0 and nothing written\n{err}"
    if drawn.get("closed") and code != 2 and not interrupted_line(err) and output is None \
            and argv[0] != "explore":
        last = err.splitlines()[-1] if err else ""  # after any line of its own (a configuration skipped)
        assert code == 4 and "standard output: it is closed" in last and "Traceback" not in err, \
            f"{shown}: exit {code}\n{err}"


def interrupted_line(err: str) -> bool:
    return "interrupted" in err


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
