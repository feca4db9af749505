"""The named configurations of model-spec section 8 give the spec's verdicts.

The figures are the acceptance's, from an independent implementation of the
spec: they are written here literally, not read back from the configurations.
"""

from __future__ import annotations

import attrs
import pytest

from protocol import properties
from helpers import checked
from protocol.configurations.named import named_configurations
from protocol.run import check
from protocol.model.next import replay

SAFETY = ["TypeOK", "I1", "PhysicalLeSince", "NoRegression"]

# name -> (violated property, shortest counterexample length) at P=2, D=1, MaxTime=2
REFUTED = {
    "HoldsRouted": ("I1", 6),
    "HoldsBroadcast": ("I1", 6),
    "HoldsCap": ("I1", 7),
    "HoldsReleaseOnMaint": ("I1", 8),
    "HoldsPhysicalFromUpper": ("PhysicalLeSince", 3),
}
# name -> (distinct states, depth) at the default constants
SOUND = {"Holds": (27_031, 21), "HoldsAcquire": (43_301, 21)}


def test_every_configuration_of_the_spec_is_named():
    names = list(named_configurations())
    assert set(SOUND) | set(REFUTED) <= set(names)
    assert names[:2] == ["Holds", "HoldsAcquire"]  # the spec's order


@pytest.mark.parametrize("name", list(REFUTED))
def test_each_refutation_declares_the_specs_expectation(name):
    named = named_configurations()[name]
    assert (named.violates, named.length) == REFUTED[name]
    assert len(named.doc.split()) > 20, "the docstring must say why the mechanism fails"


@pytest.mark.parametrize("name", list(SOUND))
def test_a_sound_configuration_holds_with_the_reference_counts(name):
    result = checked(name)
    assert result.complete
    assert (result.distinct_states, result.depth) == SOUND[name]
    assert {prop: result.properties[prop].holds for prop in SAFETY} == dict.fromkeys(SAFETY, True)
    assert result.as_expected and result.mismatches() == []


@pytest.mark.parametrize("name", list(REFUTED))
def test_a_refutation_violates_exactly_its_property_with_the_reference_length(name):
    prop, length = REFUTED[name]
    result = checked(name)
    assert result.complete
    verdicts = {p: (result.properties[p].holds, result.properties[p].trace_length) for p in SAFETY}
    expected = {p: (True, None) for p in SAFETY}
    expected[prop] = (False, length)
    assert verdicts == expected
    assert result.as_expected and result.mismatches() == []


@pytest.mark.parametrize("name", list(REFUTED))
def test_the_shortest_trace_replays_and_breaks_the_property_only_at_its_end(name):
    prop, length = REFUTED[name]
    result = checked(name)
    trace = result.violation(prop)
    cfg = result.config
    labels = [step.action for step in trace.steps[1:]]
    replayed = replay(cfg, [str(label) for label in labels])
    assert [step.state for step in replayed] == [step.state for step in trace.steps]
    assert len(replayed) == length
    holds = properties.by_name(prop).check
    assert [holds(step.state, cfg) for step in replayed] == [True] * (length - 1) + [False]


def test_replay_refuses_an_action_that_is_not_enabled():
    cfg = named_configurations()["HoldsRouted"].config
    with pytest.raises(ValueError, match="Publish"):
        replay(cfg, ["CreatePeek(0, 0)", "Publish(0)"])


def test_the_cap_holds_with_one_process():
    result = checked("HoldsCap", P=1)
    assert result.complete
    assert result.named.expected_violation() is None
    assert all(result.properties[prop].holds is True for prop in SAFETY)
    assert result.as_expected


SMALL_CONSTANTS = [dict(P=p, D=d, MaxTime=m) for p in (1, 2) for d in (0, 1) for m in (0, 1)]


@pytest.mark.parametrize("name", list(SOUND) + list(REFUTED))
def test_every_configuration_is_as_expected_at_smaller_constants(name):
    """Where a defect cannot show (no peek, one time, one process) the configuration
    must be expected to hold, and elsewhere to fail: `-c` must not make a run lie. (At D=0
    or MaxTime=0 the states it was meant to reach are missing: such a run is not as
    expected for that, and says the constants are why; tests/test_vacuity.py.)"""
    wrong = {}
    for constants in SMALL_CONSTANTS:
        result = checked(name, **constants)
        verdicts = [line for line in result.mismatches() if "these constants are below" not in line]
        if verdicts:
            wrong[str(constants)] = verdicts
    assert wrong == {}


# ------------------------------------------- a changed expectation is reported


@pytest.mark.parametrize("name", list(REFUTED))
def test_a_refutation_expected_with_another_length_is_not_as_expected(name):
    prop, length = REFUTED[name]
    result = checked(name)
    wrong = attrs.evolve(result, named=attrs.evolve(result.named, expect={prop: length + 1}))
    assert not wrong.as_expected
    assert wrong.mismatches() == [f"{prop} violated in {length} states, expected {length + 1}"]


@pytest.mark.parametrize("name", list(REFUTED))
def test_a_refutation_expected_to_hold_is_not_as_expected(name):
    prop, _ = REFUTED[name]
    result = checked(name)
    wrong = attrs.evolve(result, named=attrs.evolve(result.named, expect={}))
    assert wrong.mismatches() == [f"{prop} violated unexpectedly"]


def test_a_sound_configuration_expected_to_fail_is_not_as_expected():
    result = checked("Holds")
    wrong = attrs.evolve(result, named=attrs.evolve(result.named, expect={"I1": 6}))
    assert wrong.mismatches() == ["I1 was expected to be violated, but it holds"]


def test_checking_a_changed_expectation_end_to_end_is_not_as_expected():
    named = named_configurations()["HoldsCap"]
    assert not check(attrs.evolve(named, expect={"I1": 6})).as_expected
    assert not check(attrs.evolve(named, expect={"PhysicalLeSince": 7})).as_expected


# -------------------------------------------------------- cut-short searches


def test_a_search_cut_short_never_reports_holds():
    result = checked("Holds", max_states=100)
    assert not result.complete and result.distinct_states == 100
    assert [result.properties[prop].holds for prop in SAFETY] == [None] * len(SAFETY)
    assert not result.as_expected


def test_stopping_on_the_first_violation_still_finds_the_shortest_and_is_as_expected():
    result = checked("HoldsReleaseOnMaint", stop_on_violation=True)
    assert not result.complete
    assert result.properties["I1"].holds is False and result.properties["I1"].trace_length == 8
    assert result.as_expected
