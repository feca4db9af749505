"""The fast engine against the readable model: the same states, in the same
order, the same edges and the same first violations, on every named
configuration, at the default constants and wider ones; and the sweeps of switch
combinations that tests/test_sweep.py compares the three engines on."""

from functools import lru_cache

import pytest

from helpers import combination_id, pairwise, valid_combinations
from protocol.model.config import SWITCH_VALUES, SWITCHES as SWITCHES_DECLARED, Config, named_configurations
from protocol.engine.checker import explore
from protocol.engine.fast import Engine
from protocol.model.next import model_for
from protocol.run import explore_config, safety_properties

NAMES = list(named_configurations())
# The readable model's half of a comparison at a configuration's own constants takes
# seconds on all but the manifest's quick ones (its size class); the pairwise covering
# (below, run by tests/test_sweep.py) compares the others' switches at MaxTime=1 in the
# quick run.
QUICK_NAMES = [name for name, named in named_configurations().items() if named.size_class == "quick"]
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


@pytest.mark.parametrize("name", [n if n in QUICK_NAMES else pytest.param(n, marks=SLOW) for n in NAMES])
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
    cfg = named_configurations()[name].config.evolve(P=3, D=2, MaxTime=2)
    assert_same_exploration(cfg, max_states=10_000)


@SLOW
@pytest.mark.parametrize("name", ["Holds", "HoldsCap"])
def test_same_exploration_with_three_processes(name):
    assert_same_exploration(named_configurations()[name].config.evolve(P=3, D=1, MaxTime=1))


# Fairness changes no state or edge, only which cycles are fair: each exploration is
# compared once and its liveness verdicts under both fairness values. The quick suite
# runs a pairwise covering of the other switches (every pair of switch values
# together); the slow suite the rest of their valid combinations (spec 10.1 and 11.1
# refuse some), so that the two together run every one once. Two sweeps: the switches
# of sections 2 and 10 with section 11's at their defaults, and every valid combination
# of section 11's switches (with physical compaction, whose from_cuts they bring, and
# the alias, which seal_alias needs) on the shipped design.
# Section 12's switches (the design's TLA+ abstractions) are a third sweep, with the
# switches they change the meaning of (where compaction goes and what bounds the
# publisher, the cap's Forward, the reports that free a hold, a second index): only its
# pairwise covering runs, in the quick run, so that its three switches add a few
# combinations and not a product over the first sweep (the budget of the sweeps).
SECTION_11 = [name for name, switch in SWITCHES_DECLARED.items() if switch.section == 11]
SECTION_12 = [name for name, switch in SWITCHES_DECLARED.items() if switch.section == 12]
SWITCHES = {name: values for name, values in SWITCH_VALUES.items()
            if name != "fairness" and name not in SECTION_11 + SECTION_12}
SEAL_SWITCHES = {"physical": SWITCH_VALUES["physical"], "alias": ("none", "per_id"),
                 **{name: SWITCH_VALUES[name] for name in SECTION_11}}
TLA_SWITCHES = {**{name: SWITCH_VALUES[name] for name in ("compaction", "standing_hold", "cap", "ctl_release")},
                "alias": ("none", "per_id"), **{name: SWITCH_VALUES[name] for name in SECTION_12}}
SHIPPED = dict(compaction="broadcast", standing_hold=True)
EVERY_COMBINATION = valid_combinations(SWITCHES)
EVERY_SEAL_COMBINATION = [{**SHIPPED, **switches} for switches in valid_combinations(SEAL_SWITCHES, SHIPPED)]
TLA_COVERING = pairwise(valid_combinations(TLA_SWITCHES))
PAIRWISE = pairwise(EVERY_COMBINATION) + pairwise(EVERY_SEAL_COMBINATION) + TLA_COVERING
THE_REST = [switches for switches in EVERY_COMBINATION + EVERY_SEAL_COMBINATION if switches not in PAIRWISE]


def is_seal_combination(switches: dict) -> bool:
    return not is_tla_combination(switches) and any(name in switches for name in SECTION_11)


def is_tla_combination(switches: dict) -> bool:
    return any(name in switches for name in SECTION_12)


def sweep_constants(switches: dict) -> tuple[dict, dict | None]:
    """Where one combination of the sweeps is compared: the constants of the whole
    exploration (with liveness), and those of a prefix at two processes (PREFIX states,
    safety only) or None. MaxTime=1 keeps the readable side to a fraction of a second; an
    alias (about fifty times the states) is whole at one process. Section 11's combinations
    are whole at one process (whole at two, with liveness, they take seconds each: the
    pairwise ones are, in the slow run, tests/test_sweep.py); section 12's as the first
    sweep's (its ctl_release is whole at two processes without an alias)."""
    if is_seal_combination(switches):
        return dict(P=1, MaxTime=1), (dict(P=2, MaxTime=1) if switches["alias"] == "none" else None)
    return (dict(MaxTime=1) if switches.get("alias", "none") == "none" else dict(MaxTime=1, P=1)), None


PREFIX = 1_500

# The sweeps themselves run in tests/test_sweep.py: one exploration per engine and
# combination, the packed one compared with the readable one here (assert_same_runs)
# and with the vector one (tests/test_vector.py).


def test_the_quick_and_slow_runs_together_cover_every_switch_combination_once():
    every = EVERY_COMBINATION + EVERY_SEAL_COMBINATION + TLA_COVERING
    assert len(PAIRWISE) + len(THE_REST) == len(every)
    assert sorted(map(combination_id, PAIRWISE + THE_REST)) == sorted(map(combination_id, every))


def test_the_pairwise_covering_shows_every_value_of_every_switch_and_alias_with_two_processes():
    first = [c for c in PAIRWISE if not is_seal_combination(c) and not is_tla_combination(c)]
    for every, chosen in ((EVERY_COMBINATION, first),
                          (EVERY_SEAL_COMBINATION, [c for c in PAIRWISE if is_seal_combination(c)]),
                          (valid_combinations(TLA_SWITCHES), TLA_COVERING)):
        for name in every[0]:
            assert {c[name] for c in chosen} == {c[name] for c in every}, name
    for name, values in SWITCH_VALUES.items():  # and every value of every switch, fairness aside
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


def test_a_by_pair_invariant_fails_where_the_readable_one_does():
    """SinceAllowed relates the globals (sent) to each process's since: the packed engine
    checks it once per pair of components, and must find the readable model's violation."""
    slow, fast = assert_same_exploration(named_configurations()["HoldsAcquireFloorAgent"].config.evolve(MaxTime=1))
    assert "SinceAllowed" in fast.violations and len(fast.counterexample("SinceAllowed")) == 4
