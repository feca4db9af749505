"""`python -m protocol simulate`: seeded random walks, their findings, the CLI and its exit codes."""

from __future__ import annotations

import io
import json
import time

import pytest
from rich.console import Console

from protocol import properties as props
from helpers import checked
from protocol.cli import main
from protocol.configurations.named import lookup
from protocol.render.simulate import walk_progress_bar
from protocol.tools.simulate import simulate
from protocol.model.next import replay

ACCEPTANCE = ["-c", "P=3", "-c", "D=3", "-c", "MaxTime=3"]


def run_cli(capsys, *argv):
    code = main(["simulate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def without_seconds(line: str) -> dict:
    record = json.loads(line)
    record.pop("seconds")
    return record


# ------------------------------------------------------------------ the API


def test_a_refutation_is_found_as_a_real_run_no_shorter_than_breadth_first():
    result = simulate(lookup("HoldsRouted"), walks=200, depth=50, seed=1)
    assert result.as_expected and set(result.findings) == {"I1"}
    trace = result.findings["I1"].trace
    assert trace.length >= checked("HoldsRouted").violation("I1").length
    replayed = replay(result.config, [step.action for step in trace.steps[1:]])
    assert [step.state for step in replayed] == [step.state for step in trace.steps]
    assert not props.i1(trace.steps[-1].state, result.config)
    assert all(props.i1(step.state, result.config) for step in trace.steps[:-1])


def test_a_shipped_design_gives_no_finding():
    result = simulate(lookup("Holds"), walks=100, depth=60, seed=3)
    assert result.findings == {} and result.as_expected and result.steps > 100


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_the_same_seed_gives_the_same_walks_and_another_seed_others():
    def outcome(seed):
        result = simulate(lookup("HoldsBroadcast"), walks=60, depth=40, seed=seed)
        return result.steps, result.distinct_states, {p: f.trace for p, f in result.findings.items()}

    assert outcome(7) == outcome(7)
    assert outcome(7) != outcome(8)


def test_walks_stop_at_the_depth():
    result = simulate(lookup("Holds"), walks=10, depth=3, seed=0)
    assert result.steps == 10 * 2  # Holds always has an enabled action in its first states


def test_a_refutation_not_found_is_not_as_expected():
    result = simulate(lookup("HoldsRouted"), walks=5, depth=1, seed=0)
    assert result.findings == {} and not result.as_expected
    assert result.mismatches() == ["I1 was expected to be violated, but no walk of 5 violated it"]


def test_progress_is_reported_once_per_walk():
    seen = []
    result = simulate(lookup("HoldsCap"), walks=25, depth=20, seed=0, on_progress=seen.append)
    assert [p.walks_done for p in seen] == list(range(1, 26))
    assert seen[-1].violations == result.findings["I1"].walks > 0


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_the_progress_bar_draws_on_a_terminal():
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=True, force_interactive=True)
    with walk_progress_bar(console, "Holds", 4) as on_progress:
        def slowly(progress):  # give the bar's refresh (10 a second) time to draw
            on_progress(progress)
            time.sleep(0.15)

        simulate(lookup("Holds"), walks=4, depth=5, seed=0, on_progress=slowly)
    assert "Holds: walks" in out.getvalue() and "/4" in out.getvalue()


# ------------------------------------------------------------------ the CLI


@pytest.mark.slow
def test_acceptance_holds_routed_finds_i1_and_exits_0(capsys):
    code, out, err = run_cli(capsys, "HoldsRouted", *ACCEPTANCE, "--walks", "2000", "--seed", "1", "--json")
    record = json.loads(out)
    assert code == 0 and err == ""
    assert record["properties"]["I1"]["holds"] is False and record["as_expected"] is True
    assert record["walks"] == 2000 and record["constants"] == {"P": 3, "D": 3, "MaxTime": 3}


@pytest.mark.slow
def test_holds_finds_nothing_and_exits_0(capsys):
    code, out, _ = run_cli(capsys, "Holds", *ACCEPTANCE, "--walks", "200", "--seed", "1", "--json")
    record = json.loads(out)
    assert code == 0 and record["as_expected"] is True
    assert all(v == {"holds": None, "trace_length": None, "first_walk": None}
               for v in record["properties"].values())


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_the_cli_is_deterministic(capsys):
    argv = ("HoldsCap", "--walks", "100", "--seed", "4", "--json")
    first, second = run_cli(capsys, *argv)[1], run_cli(capsys, *argv)[1]
    assert without_seconds(first) == without_seconds(second)


def test_a_violation_is_drawn_as_check_draws_it(capsys):
    code, out, _ = run_cli(capsys, "HoldsPhysicalFromUpper", "--walks", "50", "--seed", "2")
    assert code == 0
    assert "as expected" in out and "Counterexample to PhysicalLeSince" in out
    assert "\x1b" not in out  # not a terminal: no progress bar, no colour codes


def test_not_finding_the_expected_violation_exits_1(capsys):
    code, out, _ = run_cli(capsys, "HoldsRouted", "--walks", "3", "--depth", "2")
    assert code == 1 and "NOT as expected" in out


@pytest.mark.parametrize("argv, names", [
    (["Holds", "--walks", "0"], "--walks"),
    (["Holds", "--depth", "ten"], "--depth"),
    (["Hold"], "Holds"),
    (["Holds", "-c", "P=0"], "P"),
    (["Holds", "-c", "Q=1"], "Q"),
    ([], "NAME"),
])
def test_usage_errors_are_one_line_and_exit_2(capsys, argv, names):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and names in err and "Traceback" not in err


def test_simulate_refuses_a_configuration_whose_expected_violation_is_liveness():
    from protocol.cli import main

    assert main(["simulate", "HoldsUnfair", "--walks", "1"]) == 2


def test_a_usage_error_raised_in_a_subcommand_module_is_one_line_in_a_real_run():
    """`python -m protocol` runs the CLI as one module object, so a subcommand's
    UsageError is caught as the CLI's own (no traceback)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "protocol", "simulate", "HoldsUnfair", "--walks", "1"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stdout == "" and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
