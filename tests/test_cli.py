"""The command line: exit codes, one-line usage errors, JSON Lines, `list`.

Most tests call `main(argv)` in-process with the exploration memoized per
session (helpers.cached_check), so the CLI's own logic is what they test; a
few run `python -m protocol` for real, as a user would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import cli  # noqa: F401  (a fixture)
from protocol.configurations.named import named_configurations

SAFETY = ["TypeOK", "I1", "PhysicalLeSince", "NoRegression"]
JSON_KEYS = {"config", "constants", "switches", "distinct_states", "transitions", "depth",
             "seconds", "complete", "properties", "as_expected", "engine"}


def json_records(out: str) -> list[dict]:
    lines = out.splitlines()
    assert lines, "expected JSON Lines on stdout"
    return [json.loads(line) for line in lines]


def run_protocol(*argv, timeout=120):
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "protocol", *argv], capture_output=True,
                          text=True, timeout=timeout, env=env)


# ------------------------------------------------------------ exit 0 and 1


def test_check_holds_exits_0_and_shows_every_property_holding(cli):
    code, out, err = cli("check", "Holds")
    assert (code, err) == (0, "")
    assert "as expected" in out and "27,031" in out
    for prop in SAFETY:
        assert re.search(rf"\b{prop}\s+holds\b", out), prop


def test_check_a_refutation_exits_0_and_shows_its_counterexample(cli):
    code, out, err = cli("check", "HoldsRouted")
    assert (code, err) == (0, "")
    assert re.search(r"\bI1\s+violated in 6\b", out)
    assert "Counterexample to I1: 6 states" in out and "CreatePeek(0, 0)" in out


def test_a_search_cut_short_exits_3_and_never_says_a_property_holds(cli):
    code, out, err = cli("check", "Holds", "--max-states", "100")
    assert (code, err) == (3, "")
    assert "INCOMPLETE" in out
    for prop in SAFETY:
        assert re.search(rf"\b{prop}\s+unknown\b", out), prop
        assert not re.search(rf"\b{prop}\s+holds\b", out), prop


def test_a_search_cut_short_in_json_has_no_verdicts(cli):
    code, out, _ = cli("check", "Holds", "--max-states", "100", "--json")
    (record,) = json_records(out)
    assert code == 3
    assert (record["complete"], record["as_expected"], record["distinct_states"]) == (False, False, 100)
    assert all(v == {"holds": None, "trace_length": None} for v in record["properties"].values())


def test_a_wrong_expectation_exits_1(cli, monkeypatch):
    import attrs

    import protocol.cli.common as cli_module

    def expect_too_long(name):
        named = named_configurations()[name]
        return attrs.evolve(named, expect={prop: length + 1 for prop, length in named.expect})

    monkeypatch.setattr(cli_module, "lookup", expect_too_long)
    code, out, _ = cli("check", "HoldsCap")
    assert code == 1
    assert "NOT as expected" in out and "I1 violated in 7 states, expected 8" in out


# ---------------------------------------------------------------- exit 2

USAGE_ERRORS = {
    "unknown name": (["check", "HoldsRoute"], ["'HoldsRoute'", "Did you mean HoldsRouted?",
                                               "Holds, HoldsAcquire, HoldsRouted"]),
    "P=0": (["check", "Holds", "-c", "P=0"], ["P=0", "P must be >= 1"]),
    "D=-1": (["check", "Holds", "-c", "D=-1"], ["D=-1", "D must be >= 0"]),
    "MaxTime=-1": (["check", "Holds", "-c", "MaxTime=-1"], ["MaxTime=-1", "MaxTime must be >= 0"]),
    "P=x": (["check", "Holds", "-c", "P=x"], ["P='x'", "not an integer", "P >= 1"]),
    "unknown constant": (["check", "Holds", "-c", "Q=2"], ["'Q'", "P, D, MaxTime"]),
    "malformed -c": (["check", "Holds", "-c", "P"], ["NAME=VALUE", "-c P=3"]),
    "no name, no --all": (["check"], ["name a configuration or give --all", "HoldsRouted"]),
    "names and --all": (["check", "Holds", "--all"], ["--all"]),
    "--max-states 0": (["check", "Holds", "--max-states", "0"], ["--max-states", "1 <= N"]),
    "--max-states x": (["check", "Holds", "--max-states", "x"], ["--max-states", "'x'"]),
    "unknown option": (["check", "Holds", "--bogus"], ["--bogus"]),
    "unknown command": (["frobnicate"], ["frobnicate", "check"]),
    "no command": ([], ["name a command", "check", "list"]),
}


@pytest.mark.parametrize("argv, words", USAGE_ERRORS.values(), ids=USAGE_ERRORS.keys())
def test_a_usage_error_exits_2_with_one_line_and_no_traceback(cli, argv, words):
    code, out, err = cli(*argv)
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("protocol: ") and "Traceback" not in err
    for word in words:
        assert word in err, (word, err)


def test_a_usage_error_in_a_real_run_is_one_line_and_no_traceback():
    done = run_protocol("check", "Hodls", "-c", "P=2")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Did you mean Holds?" in done.stderr
    assert "Traceback" not in done.stderr


# ------------------------------------------------------------------- JSON


def test_json_prints_one_object_per_configuration_with_exactly_the_keys(cli):
    code, out, _ = cli("check", "HoldsRouted", "HoldsCap", "--json")
    assert code == 0
    records = json_records(out)
    assert [r["config"] for r in records] == ["HoldsRouted", "HoldsCap"]
    for record in records:
        assert set(record) == JSON_KEYS | {"reachable"}  # the configuration names states it expects
        assert record["constants"] == {"P": 2, "D": 1, "MaxTime": 2}
        assert record["switches"]["compaction"] == "routed"
        assert set(SAFETY) <= set(record["properties"])
        assert all(set(v) == {"holds", "trace_length"} for name, v in record["properties"].items() if name in SAFETY)
        assert record["properties"]["CompactionNotStalled"] == {"holds": True, "trace_length": None, "vacuous": False}
        assert record["complete"] is True and record["as_expected"] is True
        assert isinstance(record["seconds"], (int, float))
    assert records[0]["properties"]["I1"] == {"holds": False, "trace_length": 6}
    assert records[1]["properties"]["I1"] == {"holds": False, "trace_length": 7}
    assert records[0]["properties"]["TypeOK"] == {"holds": True, "trace_length": None}


def test_json_reports_the_constants_given_with_c(cli):
    code, out, _ = cli("check", "HoldsCap", "-c", "P=1", "--json")
    (record,) = json_records(out)
    assert code == 0
    assert record["constants"] == {"P": 1, "D": 1, "MaxTime": 2}
    assert record["properties"]["I1"] == {"holds": True, "trace_length": None}


@pytest.mark.slow
def test_check_all_checks_every_named_configuration_and_exits_0(cli):
    code, out, _ = cli("check", "--all", "--json")
    assert code == 0
    records = json_records(out)
    assert [r["config"] for r in records] == list(named_configurations())
    assert all(r["as_expected"] for r in records)
    counts = {r["config"]: (r["distinct_states"], r["depth"]) for r in records}
    assert counts == {name: named.pinned for name, named in named_configurations().items()}
    assert not any("pinned" in r for r in records)  # the key appears only when a count differs


# ------------------------------------------------------------- real runs


def test_a_real_refutation_run_exits_0_with_json_lines():
    done = run_protocol("check", "HoldsCap", "--json")
    assert (done.returncode, done.stderr) == (0, "")
    (record,) = json_records(done.stdout)
    assert record["properties"]["I1"] == {"holds": False, "trace_length": 7}


def test_a_real_run_cut_short_exits_3():
    done = run_protocol("check", "Holds", "--max-states", "100", "--no-trace")
    assert done.returncode == 3
    assert not re.search(r"\b(TypeOK|I1|PhysicalLeSince|NoRegression)\s+holds\b", done.stdout)


def test_list_prints_every_name(cli):
    code, out, _ = cli("list")
    assert code == 0
    for name in named_configurations():
        assert re.search(rf"\b{name}\b", out), name


def test_the_console_script_is_the_module():
    script = shutil.which("protocol")
    if script is None:
        pytest.skip("the package is not installed: no `protocol` script on PATH")
    done = subprocess.run([script, "list"], capture_output=True, text=True,
                          env=dict(os.environ, COLUMNS="200"), timeout=60)
    assert done.returncode == 0
    assert all(name in done.stdout for name in named_configurations())


def test_an_option_that_cannot_check_a_named_configuration_refuses_before_any_output(cli):
    code, out, err = cli("check", "Holds", "HoldsCap", "--symmetry")
    assert code == 2
    assert out == ""  # nothing written half-way: Holds was not checked first
    assert err.count("\n") == 1 and "HoldsCap has the cap" in err and "drop --symmetry" in err


@pytest.mark.slow
def test_check_all_skips_what_an_option_cannot_check_says_so_and_exits_3(cli):
    code, out, err = cli("check", "--all", "--no-liveness", "--json")
    records = [json.loads(line) for line in out.splitlines()]
    names = [record["config"] for record in records]
    assert code == 3  # a skipped configuration has no verdict: not everything was checked
    assert "HoldsUnfair" not in names and "Holds" in names
    assert "skipped HoldsUnfair" in err and "--no-liveness" in err
    assert all("CompactionNotStalled" not in record["properties"] for record in records)


def test_json_with_output_writes_the_records_to_the_file(cli, tmp_path):
    target = tmp_path / "results.jsonl"
    code, out, _ = cli("check", "HoldsRouted", "--json", "--output", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["config"] == "HoldsRouted"


def test_a_refused_run_leaves_an_existing_output_file_untouched(cli, tmp_path):
    target = tmp_path / "results.md"
    target.write_text("keep")
    code, _, err = cli("check", "Nope", "--output", str(target))
    assert code == 2 and "unknown configuration" in err
    assert target.read_text() == "keep"


def test_an_output_in_a_missing_directory_is_refused_before_the_search(cli, tmp_path):
    code, out, err = cli("check", "Holds", "--output", str(tmp_path / "no" / "such.md"))
    assert code == 2 and out == "" and "does not exist" in err


def test_json_and_another_format_are_refused_together(cli):
    code, out, err = cli("check", "Holds", "--json", "--format", "itf")
    assert code == 2 and out == "" and "--json and --format itf" in err
