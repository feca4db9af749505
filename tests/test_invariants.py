"""Each declared safety property (protocol/properties) holds on the initial state of a
configuration it belongs to, declares the mechanisms that guard it, and can fail where
none is in place; section 5's fail on a state built to break them, and their witnesses
name the process and the value.
"""

from __future__ import annotations

import pytest

from helpers import Acquire, Compact, Create, Drop, Release, state
from protocol.properties import (
    PROPERTIES, STATE, TRANSITION, guards, witnesses_of, i1, no_regression, physical_le_since, type_ok,
)
from protocol.model.config import Config
from protocol.configurations.named import named_configurations
from protocol.model.state import LIVE, initial
from sweeps import EVERY_COMBINATION, EVERY_SEAL_COMBINATION

CFG = Config()  # P=2, D=1, MaxTime=2


# The default configuration, the switch sweeps' (tests/sweeps.py) at two processes, and
# the named configurations: where each declared property is tested.
KNOWN_CONFIGS = [Config()] + [Config(P=2, **switches) for switches in EVERY_COMBINATION + EVERY_SEAL_COMBINATION] + [
    named.config for named in named_configurations().values()]


def where_it_applies(prop) -> Config:
    """The first known configuration that the property belongs to: each declared property
    is tested where it has meaning."""
    return next(cfg for cfg in KNOWN_CONFIGS if prop.where(cfg))


DECLARED_SAFETY = [prop for prop in PROPERTIES if prop.kind in (STATE, TRANSITION)]


def test_every_safety_property_has_witnesses_and_declares_its_guards():
    for prop in DECLARED_SAFETY:
        assert prop.witnesses is not None, prop.name
        assert prop.guards is not None, f"{prop.name} declares no guards (protocol/properties/guards.py)"
        assert all(guard.mechanism for guard in prop.guards), prop.name


@pytest.mark.parametrize("prop", [prop for prop in PROPERTIES if prop.kind == STATE], ids=lambda prop: prop.name)
def test_every_state_invariant_holds_initially_with_no_witness(prop):
    cfg = where_it_applies(prop)
    s = initial(cfg)
    assert prop.check(s, cfg)
    assert prop.witnesses(s, cfg) == []


@pytest.mark.parametrize("prop", DECLARED_SAFETY, ids=lambda prop: prop.name)
def test_every_safety_property_belongs_somewhere_and_can_fail_or_says_no_switch_breaks_it(prop):
    # Where it can fail, tests/test_fuzz.py's exhaustive search finds it failing (and only
    # there); a property no switch breaks is shown failing by a sabotaged action
    # (tests/test_sabotage.py) or a state built to break it (below and in
    # tests/test_invariants_section11.py).
    assert any(prop.where(cfg) for cfg in KNOWN_CONFIGS), prop.name
    failing = [cfg for cfg in KNOWN_CONFIGS if prop.can_fail(cfg)]
    assert failing or prop.guards == guards.EVERYWHERE, prop.name


def test_a_guard_in_place_means_no_violation_is_predicted():
    i1 = next(prop for prop in PROPERTIES if prop.name == "I1")
    assert i1.can_fail(Config()) and not i1.can_fail(Config(standing_hold=True))
    assert not i1.can_fail(Config(D=0))


def test_every_invariant_predicate_has_a_docstring():
    for prop in DECLARED_SAFETY:
        assert prop.check.__doc__ and len(prop.check.__doc__.split()) > 5, prop.name


# -------------------------------------------------------------------- TypeOK

TYPE_ERRORS = {
    "policy past MaxTime": dict(policy=3),
    "negative sent": dict(sent=-1),
    "upper not an int": dict(upper="1"),
    "fwd past MaxTime": dict(fwd=3),
    "unknown df status": dict(df=(3,)),
    "df of the wrong length": dict(df=(0, 0)),
    "unborn with an as_of": dict(as_of=(1,)),
    "as_of past MaxTime": dict(as_of=(3,), df=(LIVE,)),
    "caps outside the ids": dict(caps=frozenset({1})),
    "caps not a set": dict(caps={0}),
    "Create on maintenance": dict(mq=((Create(0, 0),), ())),
    "Drop on maintenance": dict(mq=((), (Drop(0),))),
    "Acquire on interactive": dict(iq=((Acquire(0, 0),), ())),
    "a command of the wrong arity": dict(iq=((("Create", 0),), ())),
    "Compact past MaxTime": dict(mq=((Compact(3),), ())),
    "Release of an unknown peek": dict(iq=((Release(1),), ())),
    "writer past MaxTime": dict(writer=(0, 3)),
    "standing negative": dict(standing=(-1, 0)),
    "since past MaxTime": dict(since=(3, 0)),
    "physical not an int": dict(physical=(0, None)),
    "readers past MaxTime": dict(readers=((3,), (None,))),
    "acq of the wrong length": dict(acq=((None, None), (None,))),
    "released not a set": dict(released=(frozenset(), {0})),
    "released outside the ids": dict(released=(frozenset({2}), frozenset())),
    "one process missing": dict(since=(0,)),
}


@pytest.mark.parametrize("overrides", TYPE_ERRORS.values(), ids=TYPE_ERRORS.keys())
def test_type_ok_fails_outside_the_domain(overrides):
    s = state(CFG, **overrides)
    assert not type_ok(s, CFG)
    witnesses = witnesses_of("TypeOK")(s, CFG)
    assert witnesses, "a TypeOK failure must say which variable is out of its domain"
    name = next(iter(overrides))  # the variable the case breaks comes first
    assert any(w.startswith(name) for w in witnesses), witnesses


def test_type_ok_accepts_every_command_where_its_runtime_receives_it():
    s = state(
        Config(D=2),
        df=(LIVE, LIVE),
        as_of=(2, 1),
        mq=((Compact(2), Acquire(1, 2), Release(0)), ()),
        iq=((), (Create(0, 2), Drop(1), Compact(0), Release(1))),
        readers=((2, None), (None, 0)),
        acq=((None, 1), (0, None)),
        released=(frozenset({0, 1}), frozenset()),
        caps=frozenset({0, 1}),
    )
    assert type_ok(s, Config(D=2))


# ------------------------------------------------------------------------ I1


def test_i1_fails_when_since_passes_a_create_still_queued():
    s = state(CFG, iq=((), (Drop(0), Create(0, 0))), since=(0, 1))
    assert not i1(s, CFG)
    (witness,) = witnesses_of("I1")(s, CFG)
    assert "since[1] = 1" in witness and "Create(0, 0)" in witness and "process 1" in witness


def test_i1_fails_when_since_passes_a_rendered_reader():
    s = state(CFG, readers=((1,), (None,)), since=(2, 0))
    assert not i1(s, CFG)
    (witness,) = witnesses_of("I1")(s, CFG)
    assert "since[0] = 2" in witness and "hold 1" in witness and "process 0" in witness


def test_i1_holds_when_since_reaches_exactly_the_as_of():
    s = state(CFG, iq=((Create(0, 1),), ()), readers=((None,), (2,)), since=(1, 2))
    assert i1(s, CFG)
    assert witnesses_of("I1")(s, CFG) == []


def test_i1_only_compares_a_process_with_its_own_queue_and_readers():
    s = state(CFG, iq=((Create(0, 0),), ()), readers=((0,), (None,)), since=(0, 2))
    assert i1(s, CFG)


def test_i1_ignores_a_dropped_reader():
    s = state(CFG, readers=((None,), (None,)), iq=((Drop(0),), ()), since=(2, 2))
    assert i1(s, CFG)


# ---------------------------------------------------------- PhysicalLeSince


def test_physical_le_since_fails_when_physical_runs_ahead():
    s = state(CFG, since=(1, 1), physical=(1, 2))
    assert not physical_le_since(s, CFG)
    (witness,) = witnesses_of("PhysicalLeSince")(s, CFG)
    assert "physical[1] = 2" in witness and "since[1] = 1" in witness


def test_physical_le_since_holds_at_equality():
    assert physical_le_since(state(CFG, since=(2, 1), physical=(2, 1)), CFG)


# -------------------------------------------------------------- NoRegression

GLOBAL_MONOTONE = ["policy", "sent", "upper", "fwd"]  # spec section 5
PROCESS_MONOTONE = ["since", "physical", "writer", "standing"]


@pytest.mark.parametrize("name", GLOBAL_MONOTONE)
def test_no_regression_fails_when_a_global_frontier_falls(name):
    before, after = state(CFG, **{name: 2}), state(CFG, **{name: 1})
    assert not no_regression(before, after, CFG)
    assert witnesses_of("NoRegression")(before, after, CFG) == [f"{name} fell from 2 to 1"]
    assert no_regression(after, before, CFG)


@pytest.mark.parametrize("name", PROCESS_MONOTONE)
def test_no_regression_fails_when_a_process_frontier_falls(name):
    before, after = state(CFG, **{name: (2, 1)}), state(CFG, **{name: (2, 0)})
    assert not no_regression(before, after, CFG)
    assert witnesses_of("NoRegression")(before, after, CFG) == [f"{name}[1] fell from 1 to 0"]
    assert no_regression(after, before, CFG)


def test_no_regression_allows_the_other_variables_to_change_either_way():
    busy = state(CFG, df=(LIVE,), as_of=(2,), caps=frozenset({0}), mq=((Compact(1),), ()),
                 iq=((), (Create(0, 2),)), readers=((2,), (None,)), acq=((None,), (1,)),
                 released=(frozenset({0}), frozenset()))
    idle = initial(CFG)
    assert no_regression(busy, idle, CFG) and no_regression(idle, busy, CFG)
    assert no_regression(idle, idle, CFG)
