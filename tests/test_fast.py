"""The fast engine against the readable model: the same states, in the same
order, the same edges and the same first violations, on every named
configuration, at the default constants and wider ones. The sweeps of switch
combinations (tests/sweeps.py) compare the three engines in tests/test_sweep.py."""

from functools import lru_cache

import pytest

from helpers import switch_values
from protocol.model.config import Config
from protocol.configurations.named import named_configurations
from protocol.engine.checker import explore
from protocol.engine.fast import Engine
from protocol.model.next import model_for
from protocol.run import explore_config, safety_properties
from sweeps import (
    EVERY_COMBINATION, EVERY_PEER_COMBINATION, EVERY_SEAL_COMBINATION, EVERY_TLA_COMBINATION, QUICK as PAIRWISE,
    is_peer_combination, is_seal_combination, is_tla_combination,
)

NAMES = list(named_configurations())
# The readable model's half of a comparison at a configuration's own constants takes
# seconds on all but the manifest's quick ones (its size class); the pairwise covering
# (tests/sweeps.py, run by tests/test_sweep.py) compares the others' switches at MaxTime=1 in the
# quick run.
# The quick run compares the engines on the quick configurations under 5,000 states (every
# mechanism of the larger ones is in a smaller one too); the slow run on every configuration.
QUICK_NAMES = [name for name, named in named_configurations().items()
               if named.size_class == "quick" and named.pinned is not None and named.pinned[0] < 5_000]
SLOW = pytest.mark.slow


def readable_exploration(cfg, **options):
    model = model_for(cfg)
    state_props, transition_props = safety_properties(cfg)
    return explore(model.initial_states, model.successors, state_props, transition_props,
                   record_edges=True, **options)


@lru_cache(maxsize=None)  # the few quick configurations, a few thousand states each
def readable_run_at_its_constants(name: str):
    """The readable run of a named configuration, explored once for the tests that compare
    with it (here and tests/test_run_interface.py)."""
    return readable_exploration(named_configurations()[name].config)


def assert_same_exploration(cfg, **options):
    slow = readable_exploration(cfg, **options)
    fast = explore_config(cfg, engine="packed", record_edges=True, **options)
    return assert_same_runs(slow, fast)


def assert_same_runs(slow, fast):
    """The packed run `fast` is exactly the readable run `slow`: states in order, parents,
    labels, edges, counts and counterexamples."""
    assert fast.distinct_states == slow.distinct_states
    assert [fast.state(i) for i in range(fast.distinct_states)] == slow.states
    assert list(fast.parent) == list(slow.parent)
    assert fast.via == slow.via
    assert (fast.transitions, fast.depth, fast.complete) == (slow.transitions, slow.depth, slow.complete)
    assert list(fast.edge_src) == list(slow.edge_src)
    assert list(fast.edge_dst) == list(slow.edge_dst)
    assert [fast.labels[i] for i in fast.edge_label] == [slow.labels[i] for i in slow.edge_label]
    assert fast.violations.keys() == slow.violations.keys()
    for name in slow.violations:
        assert fast.counterexample(name) == slow.counterexample(name)
    return slow, fast


# The readable search of the two largest (TlaHoldsReconnect, 185,887 states; HoldsStatelessUnheld,
# 168,075) takes two minutes each: tests/test_section13_engines.py compares every engine with it at
# MaxTime = 1 and one process, and tests/test_vector.py compares the engines at their own constants.
READABLE_AT_OWN = [n for n in NAMES if named_configurations()[n].pinned is None
                   or named_configurations()[n].pinned[0] <= 100_000]


@pytest.mark.parametrize("name", [n if n in QUICK_NAMES else pytest.param(n, marks=SLOW) for n in READABLE_AT_OWN])
def test_same_exploration_at_the_configurations_constants(name):
    fast = explore_config(named_configurations()[name].config, engine="packed", record_edges=True)
    assert_same_runs(readable_run_at_its_constants(name), fast)


@pytest.mark.parametrize("name", [n for n in NAMES if named_configurations()[n].config.alias != "none"])
def test_same_exploration_for_the_alias_configurations_at_max_time_1(name):
    assert_same_exploration(named_configurations()[name].config.evolve(MaxTime=1))


@SLOW
@pytest.mark.parametrize("name", NAMES)
def test_same_exploration_prefix_at_wider_constants(name):
    # P=3 and D=2 exercise every unrolled process and every dataflow id; the
    # cut keeps the readable model's half of the comparison to seconds.
    base = named_configurations()[name].config
    # the design's silent reconnection has one dataflow (spec 12.6 refuses D=2): P=3 widens it alone
    cfg = base.evolve(P=3, D=1 if base.hello == "silent" else 2, MaxTime=2)
    assert_same_exploration(cfg, max_states=10_000)


@SLOW
@pytest.mark.parametrize("name", ["Holds", "HoldsCap"])
def test_same_exploration_with_three_processes(name):
    assert_same_exploration(named_configurations()[name].config.evolve(P=3, D=1, MaxTime=1))


# The sweeps of switch combinations (tests/sweeps.py) run in tests/test_sweep.py: one
# exploration per engine and combination, the packed one compared with the readable one
# here (assert_same_runs) and with the vector one (tests/test_vector.py).


def test_the_pairwise_covering_shows_every_value_of_every_switch_and_alias_with_two_processes():
    first = [c for c in PAIRWISE if not is_seal_combination(c) and not is_tla_combination(c)
             and not is_peer_combination(c)]
    for every, chosen in ((EVERY_COMBINATION, first),
                          (EVERY_SEAL_COMBINATION, [c for c in PAIRWISE if is_seal_combination(c)]),
                          (EVERY_TLA_COMBINATION, [c for c in PAIRWISE if is_tla_combination(c)]),
                          (EVERY_PEER_COMBINATION, [c for c in PAIRWISE if is_peer_combination(c)])):
        for name in every[0]:
            assert {c[name] for c in chosen} == {c[name] for c in every}, name
    for name, values in switch_values().items():  # and every value of every switch, fairness aside
        assert name == "fairness" or {c[name] for c in PAIRWISE if name in c} == set(values), name
    assert_same_exploration(Config(P=2, D=0, MaxTime=1, alias="shared"))


def some_packed_states(engine, limit: int) -> list:
    """Up to `limit` reachable packed states, depth first (a sample, quickly)."""
    frontier, seen = [engine.initial], {}
    while frontier and len(seen) < limit:
        packed = frontier.pop()
        if packed not in seen:
            seen[packed] = None
            frontier += [after for _, after in engine.successors(packed)]
    return list(seen)


def test_decode_inverts_encode():
    engine = Engine(model_for(named_configurations()["HoldsAcquire"].config))
    for packed in some_packed_states(engine, 2000):
        assert engine.encode(engine.decode(packed)) == packed


def test_a_failing_component_wakes_the_readable_invariant():
    run = explore_config(named_configurations()["HoldsRouted"].config)
    assert "I1" in run.violations
    assert run.engine.failures["I1"], "the engine saw the failing locals"
    assert not run.engine.failures["PhysicalLeSince"]


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_a_by_pair_invariant_fails_where_the_readable_one_does():
    """SinceAllowed relates the globals (sent) to each process's since: the packed engine
    checks it once per pair of components, and must find the readable model's violation."""
    slow, fast = assert_same_exploration(named_configurations()["HoldsAcquireFloorAgent"].config.evolve(MaxTime=1))
    assert "SinceAllowed" in fast.violations and len(fast.counterexample("SinceAllowed")) == 4
