"""Vacuity: a leads-to property whose premises are never reached holds, but says nothing;
and the states a reviewer expects to exist must be reached.

A sabotaged model makes CompactionNotStalled's premise unreachable (its `sent >= t`
asks for a time past MaxTime); every engine then reports the property as holding
vacuously, and a configuration that requires it not to is not as expected.
"""

from __future__ import annotations

import json

import attrs
import pytest

from protocol import properties as props

import protocol.properties.leads_to
from helpers import cached_check
from protocol.cli import main
from protocol.configurations.named import lookup
from protocol.run import check


@pytest.fixture
def unreachable_premise(monkeypatch):
    """CompactionNotStalled's premise `sent >= t` made to ask for t + 100: never reached."""
    sent_at_least = props.leads_to.sent_at_least
    monkeypatch.setattr(props.leads_to, "sent_at_least", lambda s, t: sent_at_least(s, t + 100))


SMALL = {"MaxTime": 1}  # Holds at MaxTime=1: a fraction of a second


@pytest.mark.parametrize("engine", [{}, {"symmetry": True}, {"workers": 2}], ids=["packed", "symmetry", "workers"])
def test_a_property_whose_premise_is_never_reached_holds_vacuously(unreachable_premise, engine):
    result = check(lookup("Holds").with_constants(SMALL), **engine)
    verdict = result.properties["CompactionNotStalled"]
    assert verdict.holds is True and verdict.vacuous
    assert verdict.premises == (False,) * len(verdict.premises) and verdict.premises


@pytest.mark.parametrize("engine", [{}, {"symmetry": True}, {"workers": 2}], ids=["packed", "symmetry", "workers"])
def test_a_reached_premise_is_reported_per_pair_by_every_engine(engine):
    result = check(lookup("Holds").with_constants(SMALL), **engine)
    verdict = result.properties["CompactionNotStalled"]
    assert verdict.holds is True and not verdict.vacuous
    assert verdict.premises == (True, True)  # sent >= 1 ~> since[p] >= 1, for p = 0 and 1


def test_a_required_nonvacuous_property_found_vacuous_is_not_as_expected(unreachable_premise, capsys):
    holds = lookup("Holds")
    assert "CompactionNotStalled" in holds.nonvacuous
    result = check(holds)
    assert result.properties["CompactionNotStalled"].vacuous
    assert result.mismatches() == ["CompactionNotStalled holds vacuously: none of its premises was reached, "
                                   "and this configuration requires it not to"]
    assert main(["check", "Holds", "--no-trace"]) == 1
    out = capsys.readouterr().out
    assert "holds (vacuous)" in out and "NOT as expected" in out
    assert main(["check", "Holds", "--json"]) == 1
    record = json.loads(capsys.readouterr().out)
    assert record["properties"]["CompactionNotStalled"] == {"holds": True, "trace_length": None, "vacuous": True}
    assert record["as_expected"] is False


def test_a_vacuous_property_not_required_is_shown_but_as_expected(unreachable_premise):
    unrequired = attrs.evolve(lookup("Holds"), nonvacuous=())
    result = check(unrequired)
    assert result.properties["CompactionNotStalled"].vacuous and result.as_expected


def test_the_review_page_shows_a_vacuous_property(unreachable_premise):
    from protocol.render.report import verdicts_html

    assert "holds (vacuous)" in verdicts_html(check(lookup("Holds").with_constants(SMALL)))


# ------------------------------------------------------------------ reachable states


def test_each_expected_state_is_reported_at_the_depth_where_it_is_first_reached():
    result = cached_check(lookup("Holds"))  # the model intact: the session's exploration of Holds
    assert result.reachable == {"PeekCreated": 2, "PeekRendered": 3, "DroppedPeekRendered": 4,
                                "CompactionSent": 2, "SinceAdvanced": 5}
    # the depth is a shortest path's: CreatePeek, then InterStep renders it
    assert dict(result.reached_words())["a peek is rendered"] == "at depth 3"


@pytest.mark.parametrize("engine", [{"symmetry": True}, {"workers": 2}], ids=["symmetry", "workers"])
def test_every_engine_finds_the_same_first_depths(engine):
    named = lookup("HoldsAcquire").with_constants(SMALL)
    assert check(named, **engine).reachable == check(named).reachable


def test_a_state_never_reached_is_not_as_expected(capsys):
    # Without an alias no reader is ever stranded.
    named = attrs.evolve(lookup("Holds"), reachable=("PeekCreated", "ReaderStranded"))
    result = check(named)
    assert result.reachable == {"PeekCreated": 2, "ReaderStranded": None}
    assert result.mismatches() == ["ReaderStranded (a reader is stranded) was never reached"]


def test_below_its_own_constants_a_state_not_reached_is_still_not_as_expected():
    """Issue 32: `check HoldsRouted -c MaxTime=0` printed "as expected" with CompactionNotStalled
    holding vacuously and two of its three reachable states not reached."""
    result = check(lookup("Holds").with_constants({"D": 0}))  # no peek: none is created
    assert result.reachable["PeekCreated"] is None and not result.as_expected
    assert "PeekCreated (a peek is created) was never reached (these constants are below Holds's own, " \
           "P=2, D=1, MaxTime=2, which may leave it out)" in result.mismatches()
    routed = check(lookup("HoldsRouted").with_constants({"MaxTime": 0}))
    assert not routed.as_expected
    assert any(line.startswith("CompactionNotStalled holds vacuously") for line in routed.mismatches())
    assert check(lookup("HoldsRouted").with_constants({"MaxTime": 1})).as_expected


def test_fingerprints_keep_no_states_to_look_in(capsys):
    assert main(["check", "HoldsRouted", "--fingerprints", "--no-liveness", "--no-trace"]) == 0
    assert "not checked" in capsys.readouterr().out


# ------------------------------------------------------------------ the manifest


def test_every_configuration_that_expects_a_leads_to_to_hold_requires_it_nonvacuous():
    from protocol.properties import LIVENESS, names_for
    from protocol.configurations.named import named_configurations

    for named in named_configurations().values():
        expected_to_hold = [name for name in names_for(named.config, LIVENESS)
                            if name not in dict(named.expect)]
        unexplained = [name for name in expected_to_hold
                       if name not in named.nonvacuous and name not in dict(named.vacuous_ok)]
        assert unexplained == [], f"{named.name}: list {unexplained} in nonvacuous or vacuous_ok"
        named_here = [*named.nonvacuous, *dict(named.vacuous_ok)]
        assert set(named_here) <= set(expected_to_hold), f"{named.name}: not a liveness property it expects to hold"


def test_every_reachable_name_in_the_manifest_is_a_declared_predicate():
    from protocol.properties.reachable import REACHABLE
    from protocol.configurations.named import named_configurations

    for named in named_configurations().values():
        assert set(named.reachable) <= set(REACHABLE), named.name
        assert named.reachable, f"{named.name} names no state it expects to reach"


# ------------------------------------------------------------------ the engine alone


def toy_model(pairs):
    """A counter 0 -> 1 -> 2 that stops, with the given leads-to pairs and no fairness
    (so a behaviour may stop anywhere: only a conclusion that holds at once is kept)."""
    from protocol.engine import CONTROLLER, Footprint, Instance, Label, Model

    step = Instance(Label("Step"), lambda s: s + 1 if s < 2 else None, None, Footprint(CONTROLLER), None)
    return Model([0], [step], None, 1, {}, {}, frozenset(), {"P": pairs}, [], None)


def test_the_sequential_run_says_which_premises_were_reached():
    from protocol.engine import LeadsTo
    from protocol.engine.checker import explore

    pairs = [LeadsTo(lambda s: s == 5, lambda s: s == 2, "s = 5 ~> s = 2"),
             LeadsTo(lambda s: s == 1, lambda s: s >= 1, "s = 1 ~> s >= 1")]
    model = toy_model(pairs)
    run = explore(model.initial_states, model.successors, record_edges=True)
    decided = run.decide_liveness(model)["P"]
    assert decided.holds is True and decided.premises == (False, True) and not decided.vacuous
    alone = toy_model(pairs[:1])
    decided = run.decide_liveness(alone)["P"]
    assert decided.holds is True and decided.vacuous
    assert run.first_reached({"two": lambda s: s == 2, "nine": lambda s: s == 9}) == {"two": 3, "nine": None}
    assert run.counts().level_sizes == (1, 1, 1)


def test_the_review_page_says_where_each_expected_state_was_first_reached():
    from protocol.render.report import summary_html

    page = summary_html(check(lookup("Holds").with_constants(SMALL)))
    assert "reachable: a peek is rendered</th><td>at depth 3" in page
