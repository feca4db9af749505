"""Section 11's properties: each holds on its configuration's initial state, fails on a
state built to break it, and names the process and the values in its witnesses; each
belongs exactly to the configurations the spec gives it."""

from __future__ import annotations

import pytest

from protocol import properties as props
from helpers import per_process, state
from protocol.model.config import Config
from protocol.model.state import BOTTOM, DROPPED, LIVE, initial

SEAL = Config(P=2, seal="sink")
CUTS = Config(P=2, seal="sink", physical="from_cuts")
REPORT = Config(P=2, ctl_release="report")
STANDING = Config(P=2, standing_hold=True)
AGENT = Config(P=2, floor="agent")


def prop(name: str):
    return props.by_name(name)


# That each holds on the initial state of a configuration it belongs to, with no witness,
# is tests/test_invariants.py's, for every declared property.


def test_since_allowed_fails_when_since_passes_every_sent():
    s = state(Config(), since=(0, 1))
    assert not props.since_allowed(s)
    assert props.since_allowed_witnesses(s) == [
        "since[1] = 1 is past 0, the most the controller allowed in AllowCompaction: "
        "the publisher compacted on a frontier no writer asked for"]
    assert props.since_allowed(s._replace(sent=1))


def test_since_allowed_takes_the_greatest_sent_of_an_alias():
    cfg = Config(P=1, alias="per_id")
    assert props.since_allowed(state(cfg, since=(1,), sent=(0, 1)))
    assert not props.since_allowed(state(cfg, since=(2,), sent=(0, 1)))


def test_since_le_standing_fails_past_any_entry():
    s = state(STANDING, since=(1, 0), standing=(0, 0))
    assert not props.since_le_standing(s)
    assert "since[0] = 1 is past the standing hold 0" in props.since_le_standing_witnesses(s)[0]
    per_id = Config(P=1, standing_hold=True, alias="per_id")
    assert not props.since_le_standing(state(per_id, since=(1,), standing=((1, 0),)))
    assert props.since_le_standing(state(per_id, since=(1,), standing=((1, 1),)))


def test_physical_le_coverage_and_le_cut():
    past_coverage = state(CUTS, physical=(1, 0), pub=(0, 0))
    assert not props.physical_le_coverage(past_coverage)
    assert props.physical_le_coverage_witnesses(past_coverage)[0].startswith("physical[0] = 1 is past pub[0] = 0")
    past_cut = state(CUTS, physical=(0, 1), pub=(0, 2), cut=((None,), (0,)))
    assert props.physical_le_coverage(past_cut) and not props.physical_le_cut(past_cut)
    assert props.physical_le_cut_witnesses(past_cut) == [
        "physical[1] = 1 is past peek 0's declared cut 0: its reader's times were merged"]


def test_each_property_belongs_where_the_spec_says():
    assert "SinceAllowed" in props.names_for(Config())
    assert "SinceLeStanding" not in props.names_for(Config())
    assert "SinceLeStanding" in props.names_for(STANDING)
    assert {"PeeksServed"} <= set(props.names_for(SEAL)) and "PeeksServed" not in props.names_for(Config())
    assert "CtlHoldReleased" in props.names_for(REPORT) and "CtlHoldReleased" not in props.names_for(SEAL)
    with_cuts = props.names_for(CUTS)
    assert {"PhysicalLeCoverage", "PhysicalLeCut"} <= set(with_cuts) and "PhysicalLeSince" not in with_cuts
    assert props.not_applicable_for(CUTS) == {"PhysicalLeSince": "with from_cuts"}
    assert props.not_applicable_for(SEAL) == {}


def test_peeks_served_is_unmet_while_a_peek_with_written_data_stays_parked():
    pairs = props.peeks_served(SEAL)
    assert [pair.text for pair in pairs] == ["0 in parked[0] and upper > as_of[0] ~> 0 not in parked[0]",
                                            "0 in parked[1] and upper > as_of[0] ~> 0 not in parked[1]"]
    waiting = state(SEAL, df=(LIVE,), upper=1, parked=per_process(SEAL, frozenset(), p1=frozenset({0})),
                    readers=per_process(SEAL, (None,), p1=(0,)))
    assert not pairs[0].premise(waiting) and pairs[1].premise(waiting) and not pairs[1].conclusion(waiting)
    assert not pairs[1].premise(waiting._replace(upper=0))  # nothing is written past its as_of yet
    assert props.peeks_served_witnesses(waiting) == [
        "peek 0 is parked on process 1 though upper 1 is past its as_of 0 (the published upper there is 0): "
        "no wakeup re-examines it"]


def test_ctl_hold_released_waits_for_every_report():
    (pair,) = props.ctl_hold_released(REPORT)
    dropped = state(REPORT, df=(DROPPED,), reports=(1,), reported=(frozenset({0}), frozenset()))
    assert pair.premise(dropped) and not pair.conclusion(dropped)
    assert pair.conclusion(dropped._replace(reports=(2,), reported=(frozenset({0}), frozenset({0}))))
    assert props.ctl_hold_released_witnesses(dropped) == [
        "peek 0 is dropped, but the controller still holds its read hold at 0: process 1 never reported it retired"]


def test_no_regression_sees_pub_and_lets_a_writer_rise_from_bottom():
    before = initial(AGENT)
    assert before.writer == (BOTTOM, BOTTOM)
    assert props.no_regression(before, before._replace(writer=(0, BOTTOM)))
    assert not props.no_regression(before._replace(writer=(0, BOTTOM)), before)
    sealed = initial(SEAL)._replace(pub=(1, 0), upper=1)
    assert not props.no_regression(sealed, sealed._replace(pub=(0, 0)))
    assert props.no_regression_witnesses(sealed, sealed._replace(pub=(0, 0))) == ["pub[0] fell from 1 to 0"]


@pytest.mark.parametrize("cfg, changes, what", [
    (SEAL, dict(pub=(3, 0)), "pub[0] = 3 is not a time 0..2"),
    (SEAL, dict(parked=(frozenset({1}), frozenset())), "parked[0] = frozenset({1}) is not a set of peek ids"),
    (SEAL, dict(dirty=(frozenset({1}), frozenset())), "dirty[0] = frozenset({1}) is not a set of index ids"),
    (REPORT, dict(reports=(3,)), "reports = (3,) is not a count per peek id"),
    (REPORT, dict(reported=(frozenset({1}), frozenset())), "reported[0] = frozenset({1}) is not a set of peek ids"),
    (CUTS, dict(cut=((3,), (None,))), "cut[0] = (3,) is not a map peek id -> time"),
    (Config(), dict(writer=(BOTTOM, 0)), "writer[0] = -1 is not a time 0..2"),
    (Config(), dict(pub=(0, 0)), "pub[0] = 0, but this configuration has no pub"),
])
def test_type_ok_checks_the_new_variables(cfg, changes, what):
    s = state(cfg, **changes)
    assert not props.type_ok(s, cfg)
    assert what in props.type_ok_witnesses(s, cfg)


def test_type_ok_admits_bottom_writers_with_the_agent_floor():
    assert props.type_ok(initial(AGENT), AGENT)
    assert props.type_ok(initial(Config(P=1, floor="agent", alias="per_id")),
                              Config(P=1, floor="agent", alias="per_id"))
