"""Issue 24's low items that were still open: GraphML's booleans, the refusal of a
constant past a limit, the matrix grid's width, broken pipes, and tables at 60
columns that wrap at word boundaries instead of cutting words."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ElementTree

import networkx as nx
import pytest

from helpers import cli  # noqa: F401  (a fixture)

GRAPHML = "{http://graphml.graphdrawing.org/xmlns}"


def test_graphml_writes_booleans_as_its_boolean_type_spells_them():
    """networkx declared the key `boolean` and wrote Python's True/False (XML Schema: true/false)."""
    from protocol.render.export import graph_graphml

    graph = nx.DiGraph()
    graph.add_node(0, initial=True, on_trace=False, label="0")
    graph.add_node(1, initial=False, on_trace=True, label="True")  # a string stays as it is
    graph.add_edge(0, 1, on_trace=False, action="Tick")
    text = graph_graphml(graph)
    root = ElementTree.fromstring(text)
    keys = {key.get("id"): (key.get("attr.name"), key.get("attr.type")) for key in root.iter(f"{GRAPHML}key")}
    values = {(keys[data.get("key")][0], keys[data.get("key")][1], data.text) for data in root.iter(f"{GRAPHML}data")}
    booleans = {value for name, kind, value in values if kind == "boolean"}
    assert booleans == {"true", "false"}, values
    assert ("label", "string", "True") in values
    back = nx.read_graphml(io.BytesIO(text.encode()))
    assert back.nodes["0"]["initial"] is True and back.nodes["1"]["initial"] is False


@pytest.mark.parametrize("argv", [["check", "Holds", "--symmetry"],
                                  ["matrix"]])
def test_a_constant_past_its_bound_names_the_real_limit_not_an_option(cli, argv):
    """`check Holds -c P=1000` cited --symmetry, which lifts no bound (and is not even given)."""
    code, out, err = cli(*argv, "-c", "P=1000")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1, err
    assert "P must be <= 8" in err and "multiplies the reachable states" in err
    assert "--" not in err.split("P must be <= 8", 1)[1], err  # no option is the fix


def narrowest_grid_px(page: str) -> float:
    """The narrowest the matrix grid can be laid out: per column, its longest run that cannot
    break (between spaces and <wbr>) at about 8.5 px a character of the 13.5 px font, plus
    the cell's padding and border; the remark column at its CSS min-width of 22ch."""
    import html as html_text

    grid = page[page.index('<table class="grid">'):page.index("</table>", page.index('<table class="grid">'))]
    rows = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row) for row in re.findall(r"<tr.*?</tr>", grid, re.S)]

    def runs(cell: str) -> int:
        words = re.split(r"\s+|<wbr>", re.sub(r"<(?!wbr>)[^>]*>", " ", cell))
        return max((len(html_text.unescape(word)) for word in words), default=0)

    columns = len(rows[0])
    widest = [max(runs(row[c]) for row in rows if len(row) > c) for c in range(columns)]
    widest[-1] = max(widest[-1], 22)
    return sum(8.5 * chars + 17 for chars in widest)


@pytest.mark.slow  # checks the whole matrix at P=1, MaxTime=1
def test_the_matrix_grid_fits_a_1280_px_window_remark_column_included():
    """The report's grid clipped its remark column at 1280 px: eight unbreakable property names."""
    from protocol.tools.matrix import run_matrix
    from protocol.render.report import matrix_section

    page = matrix_section(run_matrix({"P": 1, "D": 1, "MaxTime": 1}))
    assert narrowest_grid_px(page) <= 1280 - 2 * 28, narrowest_grid_px(page)  # the body's padding
    assert "Compaction<wbr>Not<wbr>Stalled" in page


class GoneReader:
    """Standard output whose reader went away: every write fails as a closed pipe's does."""

    encoding = "utf-8"

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        raise BrokenPipeError(32, "Broken pipe")

    def isatty(self):
        return False


def test_a_reader_gone_away_ends_the_run_silently_with_the_one_exit_code(cli, monkeypatch):
    from protocol.cli.common import EXIT_BROKEN_PIPE

    monkeypatch.setattr("sys.stdout", GoneReader())
    code, out, err = cli("list")
    assert (code, err) == (EXIT_BROKEN_PIPE, "")
    assert EXIT_BROKEN_PIPE == 4  # the environment's code, as docs/checker.md's exit codes say


@pytest.mark.slow  # one interpreter per command
@pytest.mark.parametrize("argv", [["check", "HoldsRouted"], ["check", "HoldsRouted", "--json"], ["list"],
                                  ["matrix", "-c", "MaxTime=1", "-c", "P=1"], ["report", "HoldsRouted"],
                                  ["simulate", "HoldsRouted", "--walks", "200"], ["graph", "HoldsRouted"],
                                  ["check", "--help"]])
def test_every_command_into_a_closed_pipe_exits_4_without_a_word(argv):
    """`check Holds | head -1` exited 1, `graph` 0, and check --json, report, graph and
    --help printed a BrokenPipeError traceback (cli.py caught it after `except Exception`)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    reader, writer = os.pipe()
    os.close(reader)  # the reader has gone before the first line
    try:
        done = subprocess.run([sys.executable, "-m", "protocol", *argv], cwd=root, stdout=writer,
                              stderr=subprocess.PIPE, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(root), "COLUMNS": "80"})
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (4, "")


def words(text: str) -> set[str]:
    """The words of a table as text, a verdict's ✗ apart from its length (✗12 below 80 columns)."""
    return {word.strip(",;()") for word in text.replace("✗", "✗ ").split()} - {""}


def body_words(text: str) -> set[str]:
    """The words under the header rule (the headers take initials when narrow, named in the caption)."""
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if set(line.strip()) == {"─"})
    return words("\n".join(lines[rule + 1:]))


def small_matrix():
    import attrs

    from protocol.tools.matrix import Matrix, Outcome, plan

    rows = plan({"P": 2, "D": 1, "MaxTime": 2})
    outcome = Outcome({"I1": (True, None), "CompactionNotStalled": (False, 12), "TypeOK": (True, None),
                       "PhysicalLeSince": (False, 3), "NoRegression": (True, None), "SinceLeStanding": (None, None)},
                      distinct_states=22_431, transitions=1, depth=3, seconds=0.0, complete=True)
    return Matrix(tuple(attrs.evolve(row, outcome=outcome) if row.same_as is None else row for row in rows))


@pytest.mark.parametrize("table", ["list", pytest.param("matrix", marks=pytest.mark.slow)])  # 96 rows: 0.5 s
def test_at_60_columns_every_word_of_the_wide_table_is_whole(table):
    """`list` and `matrix` folded words mid-word at 60 columns (standing_h / old=False), and the
    matrix's last verdict columns and its caption's ends were cut off the screen."""
    from protocol.configurations.named import named_configurations
    from protocol.render.terminal import configurations_table, plain_text
    from protocol.render.matrix import matrix_table

    if table == "list":
        draw = lambda width: configurations_table(named_configurations().values(), width)  # noqa: E731
    else:
        matrix = small_matrix()
        draw = lambda width: matrix_table(matrix, width)  # noqa: E731
    wide, narrow = plain_text(draw(200), 200), plain_text(draw(60), 60)
    assert max(len(line) for line in narrow.splitlines()) <= 60
    assert "…" not in narrow
    missing = body_words(wide) - words(narrow)
    assert not missing, (missing, narrow)


# ------------------------------------------------------------------ issue 32's low items


def test_a_deleted_working_directory_is_one_line_and_exit_2(cli, monkeypatch):  # noqa: F811
    """`docs --check` from a deleted directory ended in a FileNotFoundError traceback."""
    import os

    def gone():
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(os, "getcwd", gone)
    code, out, err = cli("docs", "--check")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "current directory no longer exists" in err


def test_a_stop_on_violation_summary_counts_the_runs_cut_short_and_names_the_command(cli):  # noqa: F811
    """It counted an incomplete run as "0 not as expected" and was titled "check --all" for named
    configurations too."""
    code, out, err = cli("check", "HoldsRouted", "HoldsCap", "-c", "MaxTime=1", "--stop-on-violation", "--no-trace")
    assert code == 3  # both stopped at their expected violation: cut short
    lines = out.splitlines()
    totals = lines.index("check")  # the title names the command as given
    assert "check --all" not in out
    said = " ".join(" ".join(lines[totals:]).split())
    assert "0 not as expected, 2 cut short (incomplete: no verdict)" in said, said
    assert said.count("cut short") == 3  # each row, and the count


def test_matrix_help_names_every_switch_it_varies(capsys):
    """`matrix --help` omitted ctl_release (section 11)."""
    from protocol.cli.main import main
    from protocol.tools.matrix import matrix_switches

    with pytest.raises(SystemExit) as done:
        main(["matrix", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0 and "ctl_release" in matrix_switches()
    assert all(name in out for name in matrix_switches())


def test_docs_write_rewrites_only_what_changed_and_names_no_output_option(cli, monkeypatch, tmp_path):  # noqa: F811
    """`docs --write` said "wrote" for unchanged files, and on a read-only checkout its one line
    named "--output", an option docs does not have."""
    import protocol.cli.docs as command

    current, stale = tmp_path / "current.md", tmp_path / "stale.md"
    current.write_text("same\n")
    stale.write_text("old\n")
    monkeypatch.setattr(command, "find_checkout", lambda: tmp_path)
    monkeypatch.setattr(command, "derived_files", lambda root: {current: "same\n", stale: "new\n"})
    code, out, err = cli("docs", "--write")
    assert (code, err) == (0, "") and stale.read_text() == "new\n"
    assert "wrote stale.md" in out and "current.md" not in out and "1 already current" in out
    stale.write_text("old\n")
    tmp_path.chmod(0o555)
    try:
        import os

        if os.access(tmp_path, os.W_OK):  # root: write permission bits do not stop it
            monkeypatch.setattr("tempfile.mkstemp", lambda *a, **k: (_ for _ in ()).throw(
                OSError(30, "Read-only file system")))
        code, out, err = cli("docs", "--write")
    finally:
        tmp_path.chmod(0o755)
    assert code == 4 and err.count("\n") == 1 and "--output" not in err and "stale.md" in err, err  # the environment


def test_a_temporary_file_left_by_a_killed_run_is_removed_by_the_next(cli, tmp_path):  # noqa: F811
    """A SIGKILL during `check --all --output` left `.out.txt.XXXX.partial` for good: the
    temporary's name now carries its writer's id, and a dead writer's is swept."""
    import os

    dead = tmp_path / ".out.txt.99999999.x1.partial"  # above Linux's largest process id (4,194,304)
    dead.write_text("half")
    alive = tmp_path / f".out.txt.{os.getpid()}.x2.partial"  # this process: alive
    alive.write_text("being written")
    code, _, err = cli("check", "HoldsRouted", "-c", "MaxTime=1", "--no-trace", "--output", str(tmp_path / "out.txt"))
    assert (code, err) == (0, "")
    assert not dead.exists() and alive.exists()


def test_bench_says_which_mode_it_did_not_run(monkeypatch):
    """`bench --max-states 10` dropped safety+liveness without a word where safety did not fit."""
    import protocol.tools.bench as bench
    from protocol.cli.bench import line

    monkeypatch.setattr(bench, "measure_fresh", lambda name, constants, mode, max_states: {
        "config": name, "constants": constants, "mode": mode, "complete": False, "distinct_states": 10})
    records = bench.ladder(({"P": 1, "D": 1, "MaxTime": 1},), ("HoldsRouted",), ("safety", "safety+liveness"),
                           max_states=10)
    assert [record["mode"] for record in records] == ["safety", "safety+liveness"]
    assert line(records[1]).endswith("safety+liveness: not run: safety does not fit in 10 states")


def test_a_matrix_past_the_default_constants_says_how_long_before_it_starts(cli, monkeypatch):  # noqa: F811
    """`matrix -c P=8` started with no estimate: the first line is now how long at least,
    from a probe of the baseline cut at its state budget; within the budget, the
    baseline's own time. At the defaults no probe runs and nothing is said."""
    import protocol.tools.matrix as matrix_tool
    from protocol.render.matrix import estimate_line

    monkeypatch.setattr(matrix_tool, "PROBE_STATES", 2_000)
    cut = matrix_tool.estimate({"P": 3, "D": 1, "MaxTime": 2})
    assert not cut.complete and cut.states >= 2_000 and cut.combinations == len(
        [row for row in matrix_tool.plan({"P": 3, "D": 1, "MaxTime": 2}) if row.same_as is None])
    line = estimate_line(cut)
    assert "P=3, D=1, MaxTime=2" in line and "passes" in line and "expect far more than" in line
    assert matrix_tool.estimate({"P": 2, "D": 1, "MaxTime": 2}) is None
    monkeypatch.setattr(matrix_tool, "PROBE_STATES", 250_000)
    small = matrix_tool.estimate({"P": 1, "D": 2, "MaxTime": 0})
    assert small.complete and estimate_line(small) is None  # seconds: no warning
    slow = matrix_tool.Estimate({"P": 3, "D": 1, "MaxTime": 2}, 72, 195_005, 2.5, True)
    assert "expect at least 3 minutes" in estimate_line(slow)


def test_the_matrix_estimate_comes_before_the_run_on_standard_error(cli, monkeypatch):  # noqa: F811
    import protocol.cli.matrix as matrix_command
    import protocol.tools.matrix as matrix_tool

    def stop(*args, **options):  # the estimate is out before the run begins
        raise KeyboardInterrupt

    monkeypatch.setattr(matrix_tool, "PROBE_STATES", 500)
    monkeypatch.setattr(matrix_command, "run_matrix", stop)
    code, out, err = cli("matrix", "-c", "P=3")
    assert err.splitlines()[0].startswith("protocol: the matrix has"), err
    assert code != 0
