"""Every subcommand, run as a user runs it, against bad input, interrupts, full
disks, existing output files and narrow terminals: one line on stderr, no
traceback, the documented exit code, an existing output file unchanged."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ctrl_c_reaches_it

# Each case starts a fresh interpreter (about half a second of CPU): the module runs in the
# slow run, which CI adds; the in-process CLI tests (test_cli.py) keep the quick run's share.
pytestmark = [pytest.mark.slow, pytest.mark.serial]

ROOT = Path(__file__).resolve().parent.parent
OLD = "the previous run's output\n"


def start(*argv, cwd=ROOT, env=None):
    environment = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "protocol", *argv], cwd=cwd, env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_reaches_it)


def run(*argv, cwd=ROOT, env=None, timeout=120):
    process = start(*argv, cwd=cwd, env=env)
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def interrupted(*argv, after: float, timeout=60):
    """Run, send Ctrl-C after `after` seconds, and give (exit code, stdout, stderr, seconds to stop)."""
    process = start(*argv)
    time.sleep(after)
    process.send_signal(signal.SIGINT)
    sent = time.perf_counter()
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err, time.perf_counter() - sent


def one_line(err: str) -> None:
    assert "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("protocol: "), err


@pytest.fixture
def existing(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text(OLD)
    return target


# ------------------------------------------------------------------ bad input, exit 2

BAD_INPUT = {
    "huge P": (["check", "Holds", "-c", "P=99999999999999999999"], "P must be <= 8"),
    "P=1000": (["check", "Holds", "-c", "P=1000"], "P must be <= 8"),
    "thousands of digits": (["check", "Holds", "-c", "P=" + "9" * 5000], "not an integer"),
    "huge MaxTime": (["check", "Holds", "-c", "MaxTime=1000000000"], "MaxTime must be <= 1,000,000"),
    "too many instances": (["check", "Holds", "-c", "MaxTime=1000000", "-c", "D=2"], "1,048,576"),
    "constant twice": (["check", "Holds", "-c", "P=2", "-c", "P=3"], "given twice"),
    "name twice": (["check", "Holds", "Holds"], "named twice"),
    "no-trace and full": (["check", "Holds", "--no-trace", "--full"], "--no-trace and --full"),
    "json and format": (["check", "Holds", "--json", "--format", "markdown"], "give one"),
    "mermaid of many": (["check", "--all", "--format", "mermaid"], "one diagram"),
    "huge max-states": (["check", "Holds", "--max-states", "99999999999"], "out of range"),
    "simulate unfinishable": (["simulate", "Holds", "-c", "MaxTime=100000", "--walks", "10", "--depth", "50"],
                              "lower --walks, --depth or the constants"),
    "simulate huge depth": (["simulate", "Holds", "--depth", "10000000000"], "out of range"),
    "simulate huge seed": (["simulate", "Holds", "--seed", "9" * 40], "not a whole number"),
    "simulate constant": (["simulate", "Holds", "-c", "D=99999"], "D must be <="),
    "matrix json and format": (["matrix", "--json", "--format", "markdown"], "give one"),
    "matrix constant": (["matrix", "-c", "P=100"], "P must be <= 8"),
    "matrix jobs": (["matrix", "-j", "100000"], "out of range"),
    "graph too large": (["graph", "Holds"], "more than 20,000 reachable states"),
    "graph huge guard": (["graph", "Holds", "--max-states", "99999999999"], "out of range"),
    "graph constant": (["graph", "Holds", "-c", "P=0"], "P must be >= 1"),
    "bench constant": (["bench", "-c", "MaxTime=10000000"], "MaxTime must be <="),
    "bench -c and --rung": (["bench", "-c", "P=1", "--rung", "P=1"], "not both"),
    "bench rung twice": (["bench", "--rung", "P=1,P=2"], "given twice"),
    "docs no mode": (["docs"], "--write"),
}


@pytest.mark.parametrize("argv, words", BAD_INPUT.values(), ids=BAD_INPUT.keys())
def test_bad_input_is_one_line_and_exit_2_and_the_output_file_survives(argv, words, existing):
    with_output = argv[0] in ("check", "graph")
    code, out, err = run(*argv, *(["--output", str(existing)] if with_output else []))
    assert code == 2, err
    one_line(err)
    assert words in err
    assert out == ""
    assert existing.read_text() == OLD


# ------------------------------------------------------------------ output

def test_nothing_to_write_leaves_an_existing_file_unchanged(existing):
    for fmt in ("mermaid", "itf"):
        code, out, err = run("check", "Holds", "--format", fmt, "--output", str(existing))
        assert code == 0
        one_line(err)
        assert "nothing written" in err and existing.read_text() == OLD


@pytest.mark.parametrize("argv", [["check", "HoldsRouted"], ["check", "HoldsRouted", "--format", "markdown"],
                                  ["graph", "Holds", "-c", "MaxTime=1"]])
def test_a_full_disk_is_one_line_and_exit_4(argv):
    code, out, err = run(*argv, "--output", "/dev/full")
    assert code == 4  # the environment
    one_line(err)
    assert "No space left on device" in err


def test_a_full_standard_output_is_one_line_and_exit_4():
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "protocol", "list"], cwd=ROOT, stdout=full,
                              stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 4
    one_line(done.stderr)


def test_the_mermaid_file_is_a_bare_diagram(tmp_path):
    target = tmp_path / "trace.mmd"
    code, _, err = run("check", "HoldsRouted", "--format", "mermaid", "--output", str(target))
    assert (code, err) == (0, "")
    lines = target.read_text().splitlines()
    assert lines[0].startswith("%% HoldsRouted: counterexample to I1") and lines[1] == "sequenceDiagram"
    assert not any(line.startswith("```") for line in lines)


def test_piped_output_has_no_trailing_spaces():
    for argv in (["list"], ["check", "HoldsRouted"], ["simulate", "HoldsRouted", "--walks", "20"]):
        code, out, _ = run(*argv)
        assert out and not [line for line in out.splitlines() if line != line.rstrip()], argv


# ------------------------------------------------------------------ cut short

def test_stop_on_violation_is_incomplete_and_exits_3():
    code, out, err = run("check", "HoldsRouted", "--stop-on-violation", "--json")
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert code == 3 and err == ""
    assert record["complete"] is False


def test_a_cut_short_markdown_summary_says_incomplete():
    code, out, _ = run("check", "Holds", "--max-states", "100", "--format", "markdown")
    assert code == 3 and "**INCOMPLETE**" in out


def test_list_compares_with_holds():
    code, out, _ = run("list", env={"COLUMNS": "200"})
    assert code == 0
    routed = out[out.index("HoldsRouted"):out.index("HoldsBroadcast")]
    assert "compaction=routed" in routed and "standing_hold=False" in routed


# ------------------------------------------------------------------ docs

def test_docs_works_from_another_directory(tmp_path):
    code, out, err = run("docs", "--check", cwd=tmp_path)
    assert (code, err) == (0, "") and "derived files are current" in out


def test_docs_outside_any_checkout_says_it_needs_one(tmp_path):
    site = tmp_path / "site"
    for package in ("protocol", "invariants", "refutations"):
        shutil.copytree(ROOT / package, site / package, ignore=shutil.ignore_patterns("__pycache__"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site))
    done = subprocess.run([sys.executable, "-m", "protocol", "docs", "--check"], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    one_line(done.stderr)
    assert "checkout" in done.stderr


# ------------------------------------------------------------------ Ctrl-C

@pytest.mark.parametrize("after", [0.3, 1.0, 3.0])
def test_ctrl_c_in_check_keeps_an_existing_output_file(after, existing):
    code, out, err, _ = interrupted("check", "Holds", "-c", "D=2", "-c", "MaxTime=3", "--output", str(existing),
                                    after=after)
    assert code == 130  # 128 + SIGINT
    one_line(err)
    assert "interrupted" in err
    assert existing.read_text() == OLD


@pytest.mark.parametrize("options", [[], ["--symmetry"], ["--fingerprints", "--no-liveness"]])
def test_ctrl_c_in_check_keeps_the_measured_counts(options):
    code, out, err, _ = interrupted("check", "HoldsAcquire", "-c", "D=2", "-c", "MaxTime=3", "--json", *options,
                                    after=2.5)
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert code == 130  # 128 + SIGINT
    one_line(err)
    assert record["complete"] is False and record["distinct_states"] > 1
    assert record["transitions"] >= record["distinct_states"] - 1
    assert all(v["holds"] is not True for v in record["properties"].values())
    if "--fingerprints" in options:
        assert record["fingerprint_collision_probability"]["optimistic"] > 0


@pytest.mark.parametrize("after", [1.0, 4.0, 8.0])
def test_ctrl_c_in_matrix_stops_it_and_derives_nothing(after):
    code, out, err, stopping = interrupted("matrix", "--json", after=after)
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 130  # 128 + SIGINT
    one_line(err)
    assert stopping < 5, f"matrix took {stopping:.1f} s to stop after Ctrl-C"
    derivation = records[-1]
    assert derivation["derived"] is False and derivation["minimal_sufficient_sets"] == []
    for record in records[:-1]:  # no row with an unknown verdict passes for complete
        if record["complete"]:
            assert None not in [v["holds"] for v in record["properties"].values()]


def test_ctrl_c_in_simulate_reports_the_walks_run():
    code, out, err, _ = interrupted("simulate", "Holds", "--walks", "10000", after=1.5)
    assert code == 130  # 128 + SIGINT
    one_line(err)
    assert "of 10,000 run" in out


def test_ctrl_c_in_graph_keeps_an_existing_output_file(existing):
    code, out, err, _ = interrupted("graph", "HoldsAcquire", "-c", "D=2", "--max-states", "1000000",
                                    "--output", str(existing), after=1.5)
    assert code == 130  # 128 + SIGINT
    one_line(err)
    assert existing.read_text() == OLD


def test_bench_streams_lines_and_keeps_them_on_ctrl_c():
    # The first rung's measurements take seconds, the second's minutes: the Ctrl-C comes
    # with some lines written and the run still going (one rung alone ends within 12 s).
    code, out, err, _ = interrupted("bench", "--json", "--config", "Holds", "--rung", "P=2,D=2,MaxTime=2",
                                    "--rung", "P=2,D=2,MaxTime=3", after=12)
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 130  # 128 + SIGINT
    one_line(err)
    assert "machine" in records[0] and len(records) >= 2  # measurements taken before the Ctrl-C
    assert all("error" not in record for record in records[1:])


# ------------------------------------------------------------------ 80 columns

def rendered_tables():
    """Every rich table the commands print, with the words it must show whole."""
    from protocol.configurations.named import lookup
    from protocol.tools.matrix import Matrix, Outcome, plan
    from protocol.render.terminal import configurations_table, summary_table
    from protocol.render.bench import bench_table
    from protocol.render.matrix import matrix_table
    from protocol.render.simulate import simulation_table
    from protocol.run import check
    from protocol.tools.simulate import simulate
    from protocol.configurations.named import named_configurations

    reduced = check(lookup("HoldsUnfair"), symmetry=True)
    printed = check(lookup("HoldsRouted"), fingerprints=True, liveness=False)
    yield "symmetry summary", lambda width: summary_table(reduced, width), ["CompactionNotStalled", "violated in 2", "distinct states",
                                                        f"{reduced.reduced_states:,}", "as expected"]
    yield "fingerprints summary", lambda width: summary_table(printed, width), ["violated in 6", "optimistic", "actual"]
    yield "list", configurations_table(named_configurations().values()), [
        "HoldsPhysicalFromUpper", "CompactionNotStalled", "acquire=release_on_maintenance"]
    walked = simulate(lookup("HoldsRouted"), walks=50, depth=20, seed=1)
    yield "simulate", lambda width: simulation_table(walked, width), ["HoldsRouted", "of 50 run", "not violated"]
    rows = plan({"P": 2, "D": 1, "MaxTime": 2})
    outcome = Outcome({"I1": (True, None), "CompactionNotStalled": (False, 12), "TypeOK": (True, None),
                       "PhysicalLeSince": (True, None), "NoRegression": (True, None)},
                      distinct_states=22_431, transitions=1, depth=3, seconds=0.0, complete=True)
    import attrs
    matrix = Matrix(tuple(attrs.evolve(row, outcome=outcome) if row.same_as is None else row for row in rows))
    yield "matrix", lambda width: matrix_table(matrix, width), ["22,431", "HoldsPhysicalFromUpper", "✗ 12",
                                           "same system as row", "broadcast"]
    record = {"config": "HoldsAcquire", "constants": {"P": 2, "D": 2, "MaxTime": 3}, "complete": True,
              "distinct_states": 2_712_345, "reduced_states": 1_400_000, "transitions": 12_345_678, "depth": 31,
              "seconds": 123.45, "cpu_seconds": 120.0, "states_per_second": 21_000, "peak_memory_mb": 1_234}
    records = [{**record, "mode": mode} for mode in ("safety", "safety+liveness", "symmetry",
                                                     "symmetry+liveness", "fingerprints")]
    machine = {"cpus": 2, "load_average_1min": 1.0, "python": "3.11"}
    yield "bench", lambda width: bench_table(records, machine, 3_000_000, width=width), ["HoldsAcquire", "2,712,345", "12,345,678",
                                                                        "1,400,000", "1,234"]


NARROW_TABLES = ("symmetry summary", "fingerprints summary", "simulate", "bench")


@pytest.mark.parametrize("width", [60])
def test_the_summaries_fit_60_columns_without_losing_a_word(width):
    """Issue 24: below 80 columns the nested properties table was cut ("CompactionNotStal…")."""
    from protocol.render.terminal import plain_text

    for name, table, words in rendered_tables():
        if name not in NARROW_TABLES:
            continue
        text = plain_text(table(width) if callable(table) else table, width)
        assert max(len(line) for line in text.splitlines()) <= width, (name, text)
        assert "…" not in text, (name, text)
        for word in words:
            assert word in " ".join(text.split()), (name, word, text)


@pytest.mark.parametrize("width", [80, 200])
def test_every_table_fits_the_width_without_losing_a_word(width):
    from protocol.render.terminal import plain_text

    for name, table, words in rendered_tables():
        text = plain_text(table(width) if callable(table) else table, width)
        assert max(len(line) for line in text.splitlines()) <= width, (name, text)
        assert "…" not in text, (name, text)
        for word in words:
            assert word in text, (name, word, text)
