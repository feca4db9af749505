"""Model-based testing (`generate`): few shortest runs covering every target, each a log
that validates; a refutation's counterexample among them; the files written at once."""

from __future__ import annotations

import json

import pytest

from helpers import checked, cli, generated  # noqa: F401  (cli is a fixture)
from protocol.configurations.named import lookup, named_configurations
from protocol.tools.generate import ACTION, COMMAND, COUNTEREXAMPLE, EFFECT, PREMISE, Target, generate, run_log, universe
from protocol.tools.log import parse
from protocol.model.next import model_for
from protocol.tools.validate import validate


# Holds's coverage (27,031 states, about 2 s) is the slow run's: the quick run makes
# HoldsRouted's, and checks on it what holds of every configuration's (the premises, the
# shortest runs, the validation, silent actions included).
HOLDS = pytest.mark.slow


@pytest.fixture(scope="module")
def holds():
    return generate(lookup("Holds"))


@pytest.fixture(scope="module")
def routed():
    return generated("HoldsRouted")  # tests/test_logs.py validates its longest run


@HOLDS
def test_holds_covers_every_action_instance_in_few_runs(holds):
    instances = {Target(ACTION, str(label)) for label in model_for(lookup("Holds").config).labels}
    assert instances <= set(holds.covered)
    assert len(holds.runs) <= 36


@HOLDS
def test_holds_covers_every_command_each_runtime_can_apply_and_says_what_it_cannot(holds):
    commands = {target.name for target in holds.covered if target.kind == COMMAND}
    assert commands == {"interactive applies Create", "interactive applies Drop", "interactive applies Compact",
                        "maintenance applies Compact"}
    # no acquisition and no alias in the shipped design; with the split multiplexer no peer records
    # on maintenance, and neither the created index nor a reconnection's Hello (section 13)
    assert {target.name for target in holds.unreachable if target.kind == COMMAND} == {
        "maintenance applies Acquire", "maintenance applies Release", "interactive applies Release",
        "maintenance applies Export", "maintenance applies Create", "maintenance applies Drop",
        "maintenance applies CreateIndex", "interactive applies CreateIndex", "maintenance applies Hello",
        "interactive applies Hello"}


@HOLDS
def test_holds_covers_every_kind_of_effect_it_can_have(holds):
    effects = {target.name for target in holds.covered if target.kind == EFFECT}
    # the standing hold rises, a compaction is held back by a live peek, a reader registers
    assert {"StandingRaised", "CompactionHeld", "ReaderRegistered", "ReaderDropped", "Published",
            "WriterAllowed"} <= effects
    # what only the cap, the acquisition or the alias do
    assert {"CapRaised", "HoldAcquired", "Exported", "Reconnected"} <= {
        target.name for target in holds.unreachable if target.kind == EFFECT}
    from protocol.model.events import EVENT_KINDS

    assert effects | {t.name for t in holds.unreachable if t.kind == EFFECT} == set(EVENT_KINDS)


@HOLDS
def test_every_premise_is_reached_so_no_run_set_is_vacuous(holds):
    premises = {target for target in universe(lookup("Holds").config) if target.kind == PREMISE}
    assert premises and premises <= set(holds.covered)


@HOLDS
def test_each_run_is_a_shortest_path_to_the_target_it_was_made_for(holds):
    publish = next(run for run in holds.runs if run.first == Target(ACTION, "Publish(0)"))
    # AdvancePolicy, MaintStep(0), InterStep(0), Publish(0): the writer and the standing hold must both rise
    assert [str(step.action) for step in publish.steps[1:]] == ["AdvancePolicy", "MaintStep(0)", "InterStep(0)",
                                                                "Publish(0)"]
    for run in holds.runs:
        assert run.first in run.covers


@HOLDS
@pytest.mark.parametrize("silent", [(), ("Publish", "Ingest")])
def test_every_generated_run_of_holds_validates(holds, silent):
    for run in holds.runs:
        found = validate(parse(run_log("Holds", lookup("Holds").config, run.steps, silent)))
        assert found.is_behaviour and not found.violations, found.mismatch


def test_every_premise_of_the_routed_design_is_reached_and_its_runs_validate_with_silent_actions(routed):
    cfg = lookup("HoldsRouted").config
    premises = {target for target in universe(cfg) if target.kind == PREMISE}
    assert premises and premises <= set(routed.covered)
    for run in routed.runs:
        assert run.first in run.covers
        found = validate(parse(run_log("HoldsRouted", cfg, run.steps, ("Publish", "Ingest"))))
        assert found.is_behaviour, found.mismatch


def test_a_refutations_counterexample_is_among_its_runs_and_validates_as_violating(routed):
    coverage = routed
    trace = checked("HoldsRouted").violation("I1")
    run = next(run for run in coverage.runs if run.counterexample == "I1")
    assert run.first == Target(COUNTEREXAMPLE, "I1")
    assert [step.action for step in run.steps] == [step.action for step in trace.steps]
    found = validate(parse(run_log("HoldsRouted", lookup("HoldsRouted").config, run.steps)))
    # each step is followed by an observation of what it changed: the last step is event 2 x 5 - 1
    assert len(found.log.events) == 2 * (len(trace.steps) - 1)
    assert found.violations == {"I1": 2 * (len(trace.steps) - 1) - 1}


def test_the_cli_writes_the_runs_and_the_coverage_and_replaces_an_earlier_set(cli, tmp_path, routed, monkeypatch):
    # what the files hold is generate's (the test above); this is about writing them
    import protocol.cli.generate as command

    monkeypatch.setattr(command, "generate",
                        lambda named: routed if named == lookup("HoldsRouted") else generate(named))
    out_dir = tmp_path / "runs"
    code, out, err = cli("generate", "HoldsRouted", "--output", str(out_dir), "--json")
    report = json.loads(out)
    assert code == 0 and err == ""
    files = sorted(p.name for p in out_dir.iterdir())
    assert files == sorted([run["file"] for run in report["runs"]] + ["coverage.json"])
    assert json.loads((out_dir / "coverage.json").read_text()) == {k: v for k, v in report.items() if k != "seconds"}
    assert report["covered"]["counterexample I1"] == "run-01.jsonl"
    for run in report["runs"]:
        code, _, _ = cli("validate", str(out_dir / run["file"]))
        assert code == (1 if run["counterexample"] else 0)
    (out_dir / "run-99.jsonl").write_text((out_dir / "run-01.jsonl").read_text())  # an earlier set's run
    code, out, _ = cli("generate", "HoldsRouted", "--output", str(out_dir))
    assert code == 0 and "run-99.jsonl" not in {p.name for p in out_dir.iterdir()}
    assert "Coverage:" in out and "unreachable in this configuration" in out
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left behind


@pytest.mark.parametrize("name, text", [("run-01.jsonl", "my notes\n"), ("coverage.json", "{}\n"),
                                        ("run-02.jsonl", '{"format": "something/2"}\n')],
                         ids=["notes named as a run", "another coverage.json", "another format"])
def test_generate_recognises_its_own_files_by_content_and_refuses_the_rest(cli, tmp_path, name, text):
    """Issue 32: a file merely named like generate's (run-01.jsonl, coverage.json) was deleted
    or replaced with exit 0."""
    (tmp_path / name).write_text(text)
    code, _, err = cli("generate", "HoldsRouted", "-c", "MaxTime=1", "--output", str(tmp_path))
    assert code == 2 and name in err and err.count("\n") == 1, err
    assert (tmp_path / name).read_text() == text


def test_generate_writes_through_a_symbolic_link_and_leaves_nothing_behind(cli, tmp_path):
    """Issue 32: `generate --output link` replaced the link by a directory and left
    `.link.old-PID` behind each time; a second run rewrote coverage.json for its timing alone."""
    real, link = tmp_path / "real", tmp_path / "link"
    real.mkdir()
    link.symlink_to(real)
    written = []
    for _ in range(2):
        code, out, err = cli("generate", "HoldsRouted", "-c", "MaxTime=1", "--output", str(link))
        assert code == 0, err
        written.append((real / "coverage.json").read_bytes())
    first = written[0]
    assert link.is_symlink() and written[1] == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]


def test_the_cli_refuses_a_foreign_directory_or_an_unknown_action_writing_nothing(cli, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    code, _, err = cli("generate", "Holds", "--output", str(tmp_path))
    assert code == 2 and "notes.txt" in err and err.count("\n") == 1
    code, _, err = cli("generate", "Holds", "--output", str(tmp_path / "new"), "--silent", "Nap")
    assert code == 2 and "unknown action" in err and not (tmp_path / "new").exists()
    code, _, err = cli("generate", "Hold", "--output", str(tmp_path / "new"))
    assert code == 2 and "Holds" in err


@pytest.mark.parametrize("name", [name if name == "HoldsRouted" else pytest.param(name, marks=pytest.mark.slow)
                                  for name in named_configurations()])
def test_every_named_configuration_generates_in_seconds_and_every_run_validates(name):
    named = lookup(name)
    coverage = generated(name)
    # How long it takes is bench's to measure, not a test's: about 1 to 5 s of CPU here,
    # up to about 25 s for HoldsSealAliasSource on a loaded machine.
    assert len(coverage.runs) <= 36
    instances = {str(label) for label in model_for(named.config).labels}
    assert {t.name for t in coverage.unreachable if t.kind == ACTION} <= instances
    for prop in named.expected_violations():
        run = next(run for run in coverage.runs if run.counterexample == prop)
        assert run.steps == checked(name).violation(prop).steps  # the very trace the checker prints
    for run in coverage.runs:
        found = validate(parse(run_log(name, named.config, run.steps)))
        assert found.is_behaviour, (run.first, found.mismatch)
        if run.counterexample:
            assert run.counterexample in found.violations
        else:
            assert not set(found.violations) - set(named.expected_violations())


def test_the_cap_and_reconnection_reach_the_effects_the_shipped_design_cannot():
    coverage = generate(lookup("HoldsCapReconnect"))
    effects = {target.name for target in coverage.covered if target.kind == EFFECT}
    assert {"CapRaised", "CapRetired", "CompactionCapped", "CompactionForwarded", "Reconnected"} <= effects
    assert "StandingRaised" not in effects  # no standing hold with the cap
