"""Issue 57's "smaller ones", each fixed or documented as intended, by test:

- `report --max-states N --output FILE` printed its page on standard output but wrote nothing
  to FILE: a page cut short by the user's own bound is written (it says INCOMPLETE on its face);
- `matrix --jobs 2` killed as a process group left its two workers unreaped;
- `matrix -c P=8` announced 72 combinations and ended with "0 of 96";
- `bench --workers 1,2 --config NAME` ran safety+liveness@2 on a rung it had said did not fit;
- `bench`'s lines were 83 to 92 columns at COLUMNS=60;
- FORCE_COLOR was ignored in a pipe (a CI log that renders ANSI lost the verdict colours).

The first four and the last run in-process (the `cli` fixture); the matrix killed as a group
runs as a user runs it, in a session of its own.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import cli  # noqa: F401 - a fixture
from test_signals import in_session

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------ bench: a rung that does not fit


def nothing_fits(monkeypatch) -> list:
    """Every measurement cut at its bound, in no time; the list of the modes measured."""
    import protocol.tools.bench as bench

    measured = []

    def measure_fresh(name, constants, mode, max_states):
        measured.append(mode)
        return {"config": name, "constants": constants, "mode": mode, "complete": False, "distinct_states": 10}

    monkeypatch.setattr(bench, "measure_fresh", measure_fresh)
    return measured


def test_bench_runs_no_worker_count_of_a_rung_it_said_does_not_fit(monkeypatch):
    """`bench --workers 1,2 --config TlaHolds` printed "safety+liveness: not run: safety does
    not fit" and then ran safety+liveness@2: the skip knew the bare mode name only."""
    import protocol.tools.bench as bench

    measured = nothing_fits(monkeypatch)
    modes = tuple(bench.worker_mode(mode, workers) for mode in bench.WORKER_MODES for workers in (1, 2))
    records = bench.ladder(({"P": 1, "D": 1, "MaxTime": 1},), ("HoldsRouted",), modes, max_states=10)
    assert measured == ["safety", "safety@2"]
    assert [record["mode"] for record in records] == ["safety", "safety@2", "safety+liveness", "safety+liveness@2"]
    assert all("not run: safety does not fit in 10 states" in record["skipped"] for record in records[2:])


def test_bench_runs_no_engine_of_a_rung_it_said_does_not_fit(monkeypatch):
    """The same for --engines: safety/vector cut short skips safety+liveness on either engine."""
    import protocol.tools.bench as bench

    measured = nothing_fits(monkeypatch)
    modes = tuple(bench.engine_mode(mode, engine) for mode in bench.ENGINE_MODES for engine in bench.ENGINES)
    bench.ladder(({"P": 1, "D": 1, "MaxTime": 1},), ("HoldsRouted",), modes, max_states=10)
    assert measured == ["safety/packed", "safety/vector"]


# ------------------------------------------------------------------ matrix killed as a process group


def workers_of(session: int) -> int:
    """How many processes of the session are two levels below its leader (the pool's workers,
    children of the forkserver)."""
    parents = {pid: parent for pid, state, parent in in_session(session)}
    return sum(parents.get(parent) == session for parent in parents.values())


@pytest.mark.slow
@pytest.mark.serial
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_matrix_jobs_killed_as_a_process_group_leaves_no_worker_unreaped(signum):
    """`matrix --jobs 2` killed with `kill -TERM -PGID` left its two workers as zombies (16 of
    16 tries): the forkserver died of the signal before reaping them. It now outlives the
    signal, reaps them, and is stopped by the run's end."""
    process = subprocess.Popen([sys.executable, "-m", "protocol", "matrix", "--jobs", "2"], cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while workers_of(process.pid) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert workers_of(process.pid) == 2, "the two workers never started"
        time.sleep(0.5)  # each has a combination in hand
        os.killpg(process.pid, signum)
        _, err = process.communicate(timeout=30)
        time.sleep(1.0)
        left = [f"{pid} {state}" for pid, state, parent in in_session(process.pid)]
        assert process.returncode == 128 + signum, err
        assert err.count("\n") == 1 and "interrupted" in err, err
        assert left == [], f"processes of the run left after it ended (pid state): {left}"
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        for pid, state, parent in in_session(process.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


# ------------------------------------------------------------------ matrix: one count of its combinations


def test_matrix_announces_the_combinations_its_last_line_counts(cli, monkeypatch):  # noqa: F811
    """`matrix -c P=8` announced "72 combinations" (those it checks) and, interrupted, ended
    with "0 of 96 combinations checked to the end" (every row): both now count every
    combination, and the first says how many of them are checked (the others are the same
    system as one of those)."""
    import re

    import protocol.cli.matrix as matrix_command
    import protocol.tools.matrix as matrix_tool

    def interrupted_at_once(constants, jobs, on_done=None, family=matrix_tool.MECHANISMS):
        return matrix_tool.Matrix(tuple(matrix_tool.plan(constants, family)), interrupted=True, family=family)

    monkeypatch.setattr(matrix_tool, "PROBE_STATES", 500)
    monkeypatch.setattr(matrix_command, "run_matrix", interrupted_at_once)
    code, out, err = cli("matrix", "-c", "P=8", "--format", "markdown")
    announced = re.search(r"the matrix has (\d+) combinations at P=8, D=1, MaxTime=2, (\d+) of them to check "
                          r"\(the other (\d+) are the same system as one of those\)", err)
    ended = re.search(r"INCOMPLETE \(interrupted\): 0 of (\d+) combinations checked to the end", out)
    assert announced and ended, (err, out)
    total, checked, same = (int(group) for group in announced.groups())
    assert total == int(ended.group(1)) == checked + same
    rows = matrix_tool.plan({"P": 8, "D": 1, "MaxTime": 2})
    assert (total, checked) == (len(rows), sum(row.same_as is None for row in rows))
    assert "refused" not in err  # P=8 refuses no combination
    assert code == 130


def test_matrix_says_which_combinations_its_constants_refuse():
    """A combination the constants refuse is no row: said before the run, with the reason,
    not left for the user to find in a smaller table."""
    from protocol.render.matrix import refused_line
    from protocol.tools.matrix import FAMILIES, refused_by_constants

    shipped = FAMILIES["shipped"]
    constants = {"P": 1, "D": 1, "MaxTime": 2, "E": 0}
    total, refused, reasons = refused_by_constants(constants, shipped)
    assert (total, refused) == (56, 42)
    line = refused_line(constants, total, refused, reasons)
    assert line.startswith("42 of the matrix's 56 combinations are refused at P=1, D=1, MaxTime=2, E=0, so it has 14: ")
    assert "needs E>=1" in line
    for family in FAMILIES.values():  # at the family's own constants, or P=8, none is refused
        for more in ({}, {"P": 8}):
            constants = {"P": 2, "D": 1, "MaxTime": 2, **family.constants, **more}
            assert refused_line(constants, *refused_by_constants(constants, family)) is None


# ------------------------------------------------------------------ bench's lines within the width


def measured_widely(name, constants, mode, max_states):
    """A measurement with wide figures, in no time (what a fresh process would return)."""
    return {"config": name, "constants": constants, "mode": mode, "complete": True, "distinct_states": 12_345_678,
            "reduced_states": None, "transitions": 98_765_432, "depth": 41, "seconds": 1234.56,
            "cpu_seconds": 2345.67, "states_per_second": 10_000, "peak_memory_mb": 12_345, "as_expected": True,
            "load_average_1min": 1.0, "critical_seconds": 1.0, "engine": "vector", "states_per_cpu_second": 5_263,
            "bytes_per_state": 90.5, "parts": {}}


@pytest.mark.parametrize("columns", ["60", "72"])
def test_bench_lines_fit_the_width_and_keep_every_figure(cli, monkeypatch, columns):  # noqa: F811
    """At COLUMNS=60 bench's line per measurement was 83 to 92 columns. Each is now broken at
    spaces within the width, its continuation indented, and no figure is cut."""
    import protocol.cli.bench as bench_command
    import protocol.tools.bench as bench

    monkeypatch.setattr(bench, "measure_fresh", measured_widely)
    monkeypatch.setenv("COLUMNS", columns)
    code, out, err = cli("bench", "--config", "HoldsAcquire", "--rung", "P=3,D=2,MaxTime=3")
    assert (code, err) == (0, "")
    assert max(len(line) for line in out.splitlines()) <= int(columns), out
    lines = out.split("\nbenchmark")[0]  # the lines as taken, before the table
    expected = [bench_command.line(measured_widely("HoldsAcquire", {"P": 3, "D": 2, "MaxTime": 3}, mode, 0))
                for mode in bench.MODES]
    assert max(map(len, expected)) > int(columns)  # each would have been wrapped by the terminal
    assert lines.replace("\n  ", " ").splitlines() == expected


def test_bench_lines_in_a_pipe_without_columns_stay_one_line_each(cli, monkeypatch):  # noqa: F811
    import protocol.tools.bench as bench

    monkeypatch.setattr(bench, "measure_fresh", measured_widely)
    monkeypatch.delenv("COLUMNS")
    code, out, err = cli("bench", "--config", "HoldsAcquire", "--rung", "P=3,D=2,MaxTime=3")
    assert code == 0 and len([line for line in out.splitlines() if line.startswith("HoldsAcquire P=3")]) == 5


# ------------------------------------------------------------------ FORCE_COLOR in a pipe


CURSOR_MOVES = re.compile(r"\x1b\[[0-9;]*[ABCDEFGHJKST]|\x1b\[\?25[lh]|\r")  # a redraw in place, a hidden cursor


@pytest.mark.parametrize("argv", [("check", "HoldsCap", "-c", "MaxTime=1"), ("list",),
                                  ("check", "HoldsCap", "HoldsRouted", "-c", "MaxTime=1", "--no-trace")],
                         ids=" ".join)
def test_force_color_colours_the_verdicts_in_a_pipe(cli, monkeypatch, tmp_path, argv):  # noqa: F811
    """FORCE_COLOR was ignored in a pipe: a CI log that renders ANSI lost the verdict colours.
    Standard output now gets colour (SGR codes only: nothing redrawn in place, no progress bar);
    an --output file never (issue 32); NO_COLOR wins over FORCE_COLOR."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, out, err = cli(*argv)
    assert code == 0 and err == ""
    assert "\x1b[" in out and not CURSOR_MOVES.search(out), repr(out[:300])
    if argv[0] == "check":
        assert "\x1b[32mas expected" in out  # the verdict in green
        target = tmp_path / "out.txt"
        code, _, err = cli(*argv, "--output", str(target))
        assert code == 0 and "as expected" in target.read_text() and "\x1b" not in target.read_text()
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, err = cli(*argv)
    assert code == 0 and "\x1b" not in out


@pytest.mark.parametrize("argv", [("check", "HoldsCap", "-c", "MaxTime=1", "--json"),
                                  ("check", "HoldsCap", "-c", "MaxTime=1", "--format", "markdown"),
                                  ("check", "HoldsCap", "-c", "MaxTime=1", "--format", "itf"), ("graph", "HoldsRouted", "-c", "MaxTime=1")],
                         ids=" ".join)
def test_force_color_leaves_machine_formats_plain(cli, monkeypatch, argv):  # noqa: F811
    """What a program reads (JSON, markdown, a graph) stays plain text whatever FORCE_COLOR says."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, out, err = cli(*argv)
    assert code == 0 and out and "\x1b" not in out


def test_force_color_levels():
    """FORCE_COLOR=2 and 3 ask for 256 colours and true colour (force-color.org); an empty one none."""
    import io
    import sys

    from protocol.render.terminal import forced_colour

    assert forced_colour(io.StringIO()) is None  # not standard output: never
    for value, system in (("1", "standard"), ("true", "standard"), ("2", "256"), ("3", "truecolor"), ("", None)):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("FORCE_COLOR", value)
            assert forced_colour(sys.stdout) == system


# ------------------------------------------------------------------ report cut short, to a file


@pytest.mark.parametrize("argv", [("report", "HoldsRouted", "-c", "MaxTime=1", "--max-states", "5"),
                                  ("check", "HoldsRouted", "-c", "MaxTime=1", "--max-states", "5", "--format", "html"),
                                  ("report", "HoldsCap", "-c", "MaxTime=1", "--stop-on-violation")],
                         ids=" ".join)
@pytest.mark.parametrize("existing", [False, True], ids=["new file", "existing file"])
def test_a_page_cut_short_is_written_to_output_as_to_standard_output(cli, tmp_path, argv, existing):  # noqa: F811
    """`report --max-states N` printed its page on standard output, and with --output wrote
    nothing (exit 3, "only a complete run writes it"): the bound was the user's, and lost
    the page it asked for. A page cut short says INCOMPLETE on its face, so it is written,
    with the same exit code and one line saying so."""
    code, page, err = cli(*argv)
    assert code == 3 and err == "" and "INCOMPLETE" in page
    target = tmp_path / "page.html"
    if existing:
        target.write_text("the previous page\n")
    code, out, err = cli(*argv, "--output", str(target))
    assert (code, out) == (3, "")
    assert err == f"protocol: the run was cut short; the page written to --output {target} is marked INCOMPLETE\n"
    assert target.read_text() == page
    assert [path.name for path in tmp_path.iterdir()] == ["page.html"]  # no temporary file left


def test_only_a_page_is_written_cut_short(cli, tmp_path):  # noqa: F811
    """The other formats keep the rule (docs/checker.md, "Cut short"): what a program reads
    from --output is a finished run or nothing; an interrupted page is never drawn."""
    target = tmp_path / "out.json"
    code, out, err = cli("check", "HoldsRouted", "-c", "MaxTime=1", "--max-states", "5", "--json",
                         "--output", str(target))
    assert code == 3 and not target.exists() and f"nothing written to --output {target}" in err
