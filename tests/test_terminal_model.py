"""Issue 32, point 2: one terminal model. Width and colour are decided once
(render.terminal.console_for): a COLUMNS that states no width counts as unset, a tiny one
is raised to MIN_WIDTH; files get no escape codes whatever FORCE_COLOR says (a pipe gets
colour only when FORCE_COLOR asks, issue 57);
every table has a layout that keeps every value; a closed standard output is one line.

In-process (the `cli` fixture), so that the quick run keeps them."""

from __future__ import annotations

import re
import sys

import attrs
import pytest

from helpers import cli  # noqa: F401 - a fixture

PROPERTIES = ["TypeOK", "I1", "PhysicalLeSince", "SinceAllowedByHolds", "NoRegression",
              "CompactionNotStalled", "SinceLeStanding", "CtlHoldReleased"]


@pytest.mark.parametrize("columns, width", [("0", None), ("-5", None), ("abc", None), ("", None), (" ", None),
                                            ("1", 60), ("20", 60), ("60", 60), ("80", 80), ("200", 200)])
def test_columns_that_state_no_width_count_as_unset_and_a_tiny_one_is_raised(columns, width):
    from protocol.render.terminal import MIN_WIDTH, stated_width

    assert MIN_WIDTH == 60
    assert stated_width({"COLUMNS": columns}) == width


@pytest.mark.parametrize("columns", ["0", "-3", "abc", "1", "20", "40"])
def test_a_meaningless_or_tiny_columns_loses_no_output(cli, monkeypatch, tmp_path, columns):  # noqa: F811
    """Issue 32: COLUMNS=0 wrote 0 bytes and exited 0 (and `check --output FILE` wrote no
    file); COLUMNS=1 printed one character a line."""
    monkeypatch.setenv("COLUMNS", columns)
    code, out, err = cli("check", "HoldsRouted", "-c", "MaxTime=1", "--no-trace")
    assert (code, err) == (0, "")
    assert "HoldsRouted  as expected" in out and "CompactionNotStalled" in out
    assert re.search(r"property +verdict \(states\) +expected", out)  # COLUMNS=40 dropped "expected"
    assert 60 <= max(len(line) for line in out.splitlines()) <= 80
    target = tmp_path / "out.txt"
    code, _, err = cli("check", "HoldsRouted", "-c", "MaxTime=1", "--no-trace", "--output", str(target))
    assert (code, err) == (0, "") and "as expected" in target.read_text()
    code, out, err = cli("list")
    assert code == 0 and "HoldsPhysicalFromUpper" in out


@pytest.mark.parametrize("variable", ["FORCE_COLOR", "TTY_COMPATIBLE"])
def test_files_get_no_escape_codes_whatever_force_color_says(cli, monkeypatch, tmp_path,  # noqa: F811
                                                             variable):
    """Issue 32: FORCE_COLOR=1 (common in CI) put escape sequences into --output files. A pipe
    gets colour when FORCE_COLOR asks (issue 57: tests/test_small_items.py), never otherwise."""
    monkeypatch.setenv(variable, "1")
    target = tmp_path / "out.txt"
    code, out, err = cli("check", "HoldsCap", "-c", "MaxTime=1", "--output", str(target))
    assert code == 0, err
    assert "Counterexample to I1" in target.read_text() and "\x1b" not in target.read_text()
    code, out, err = cli("check", "HoldsCap", "-c", "MaxTime=1")
    assert code == 0 and ("\x1b" in out) == (variable == "FORCE_COLOR")


def test_output_through_a_symbolic_link_writes_its_target(cli, tmp_path):  # noqa: F811
    """Issue 32: --output through a symlink replaced the link with a regular file and left the
    target stale."""
    real, link = tmp_path / "real.txt", tmp_path / "link.txt"
    real.write_text("old\n")
    link.symlink_to(real)
    code, _, err = cli("check", "HoldsRouted", "-c", "MaxTime=1", "--no-trace", "--output", str(link))
    assert (code, err) == (0, "")
    assert link.is_symlink() and "as expected" in real.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real.txt"]


@pytest.mark.parametrize("argv", [("list",), ("check", "HoldsRouted", "-c", "MaxTime=1"), ("--help",),
                                  ("validate", "docs/examples/multiplexer.jsonl")], ids=" ".join)
def test_a_closed_standard_output_is_one_line_and_exit_4(capsys, monkeypatch, argv):
    """Issue 32: with stdout closed (`>&-`) every command ended in `AttributeError: 'NoneType'
    object has no attribute 'isatty'`."""
    from pathlib import Path

    from protocol.cli.main import main

    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    monkeypatch.setattr(sys, "stdout", None)
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 4 and err.count("\n") == 1 and "standard output: it is closed" in err, err  # the environment


# ------------------------------------------------------------------ the matrix at every width

def eight_property_matrix():
    """The matrix of section 11 (96 rows, eight properties), I1 violated in 12 states in every
    row checked: what the CLI draws, without checking anything."""
    from protocol.tools.matrix import Matrix, Outcome, plan

    rows = plan({"P": 2, "D": 1, "MaxTime": 2})
    outcome = Outcome({**{p: (True, None) for p in PROPERTIES}, "I1": (False, 12)},
                      distinct_states=22_431, transitions=1, depth=3, seconds=0.0, complete=True)
    return Matrix(tuple(attrs.evolve(row, outcome=outcome) if row.same_as is None else row for row in rows))


@pytest.mark.parametrize("width", [60, 80, 200])
def test_the_matrix_keeps_every_row_and_every_value_at_any_width(width):
    """Issue 32: at 80 columns or in a pipe the #, mechanisms, named and remark columns
    vanished, headers read `…` and I1 cells `✗…`: rows could not be told apart."""
    from protocol.render.matrix import matrix_table
    from protocol.render.terminal import plain_text

    matrix = eight_property_matrix()
    text = plain_text(matrix_table(matrix, width), width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text
    checked = [row for row in matrix.rows if row.same_as is None]
    assert len(re.findall(r"✗ ?12", text)) == len(checked)  # every I1 length whole
    numbers = [int(m) for m in re.findall(r"^ *(\d+) +[a-z]", text, re.M)]
    assert numbers == [row.number for row in matrix.rows]  # every row, by its number and mechanisms
    for row in matrix.rows:
        if row.outcome is not None:
            assert "22,431" in text


def test_narrower_than_any_grid_the_matrix_is_a_list_of_rows():
    from protocol.render.matrix import matrix_table
    from protocol.render.terminal import plain_text

    matrix = eight_property_matrix()
    text = plain_text(matrix_table(matrix, 50), 50)
    assert max(len(line) for line in text.splitlines()) <= 50 and "…" not in text
    assert len(re.findall(r"I1:✗12", text)) == sum(row.same_as is None for row in matrix.rows)


def test_matrix_in_a_pipe_is_readable(cli, monkeypatch):  # noqa: F811
    """The CLI end to end (its console in a pipe, no COLUMNS), on the eight-property matrix
    (not checked again here: 96 rows): every row's number and each I1 verdict whole."""
    import protocol.cli.matrix as command

    monkeypatch.delenv("COLUMNS")
    matrix = eight_property_matrix()
    monkeypatch.setattr(command, "run_with_progress", lambda constants, jobs, rows, console, family: matrix)
    code, out, err = cli("matrix", "-c", "MaxTime=1", "-c", "P=1")
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80, out
    assert len(re.findall(r"✗ ?12", out)) == sum(row.same_as is None for row in matrix.rows)


@pytest.mark.parametrize("table", ["workers", "engines", "every_configuration", "validate", "bench"])
def test_every_bench_table_keeps_every_value_at_80_columns(table):
    """A bench table wider than the terminal becomes a list of its rows (`fitted`): no cell
    cut to an ellipsis, every header and figure whole."""
    from protocol.render import bench
    from protocol.render.terminal import fitted, plain_text

    record = {"config": "HoldsSealAlias", "constants": {"P": 2}, "mode": "safety+liveness", "complete": True,
              "seconds": 44.27, "cpu_seconds": 44.26, "critical_seconds": 26.72, "peak_memory_mb": 2933,
              "distinct_states": 25_790_384, "transitions": 156_401_239, "depth": 31, "states_per_second": 582_516,
              "states_per_cpu_second": 582_516, "load_average_1min": 1.4, "engine": "vector", "lines": 1039,
              "verdict": "a behaviour", "most_states": 600, "silent": ["Publish", "Ingest"], "case": "1x length",
              "states": 520,
              "parts": {"components": 1.5, "sort": 1.2}}
    machine = {"cpus": 2, "load_average_1min": 1.4, "python": "3.11.7"}
    drawn = {"workers": lambda: bench.workers_table([record]), "engines": lambda: bench.engines_table([record]),
             "every_configuration": lambda: bench.every_configuration_table([record], machine),
             "validate": lambda: bench.validate_table([record], machine),
             "bench": lambda: bench.bench_table([record], machine, 10**8, width=80)}[table]()
    text = plain_text(fitted(drawn, 80), width=80)
    assert "…" not in text
    assert "P=2" in text  # the constants, whole, in every table
    assert max(len(line) for line in text.splitlines()) <= 80
