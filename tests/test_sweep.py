"""The three engines on the switch sweeps (tests/sweeps.py chooses the combinations: a
pairwise covering in the quick run, a 3-wise covering and a seeded sample in the slow
run, every combination with PROTOCOL_SWEEP=complete): for each combination one
exploration by the readable model, one by the packed engine and one by the vector engine; the packed one must be exactly the readable one (the comparison of
tests/test_fast.py) and exactly the vector one (that of tests/test_vector.py), and all
three give the same liveness verdicts and lassos under both fairness values. Exploring
the packed engine once for both comparisons keeps every pair of the pairwise covering
under both in the quick run, at a third less CPU than two sweeps; there the readable model
explores only the beginning of each combination (READABLE_PREFIX states), which must be
the beginning of the packed run, and the slow run compares it on the whole."""

import pytest

from helpers import combination_id, switch_values
from protocol.model.config import Config
from protocol.engine.vector import explore as vector_engine
from protocol.engine.vector.search import vector_refusal
from protocol.model.next import model_for
from protocol.run import explore_config, liveness_verdicts
import sweeps
from sweeps import PREFIX, is_seal_combination, sweep_constants
from test_fast import assert_same_runs, readable_exploration
from test_vector import assert_same_runs as assert_same_vector_run, explore_vector

SLOW = pytest.mark.slow


def compare_engines(cfg: Config, on_packed_tables: bool = False, **options) -> tuple:
    """The readable, packed and vector runs of `cfg`, the packed one checked against both.

    `on_packed_tables`: the vector engine explores with the packed run's component
    tables, filled already (`explore_vector(engine=...)`): what runs is its own work, the
    gathers, sorts, dedupe, merges, parents, edges and violations, at a seventh of the
    CPU on an alias. How a fresh engine's tables grow during the search, and the keys are
    re-keyed, the prefixes below compare, and tests/test_vector.py on the named
    configurations."""
    readable = readable_exploration(cfg, **options)
    packed = explore_config(cfg, engine="packed", record_edges=True, **options)
    assert_same_runs(readable, packed)  # so the packed run's states are the readable run's
    if on_packed_tables and vector_refusal(model_for(cfg)) is None:
        vector = vector_engine.explore_vector(model_for(cfg), record_edges=True, engine=packed.engine, **options)
    else:
        vector = explore_vector(cfg, packed, **options)
    assert_same_vector_run(packed, vector, packed_states=readable.states)
    return readable, packed, vector


def assert_prefix_of(cut, whole) -> None:
    """The run `cut` (cut short at max_states) is the beginning of the run `whole`: the same
    first states in order, parents and labels, its edges the first of `whole`'s (a cut run
    stops expanding at the first state past the bound, having recorded the edges before
    it), and each violation it found found where `whole` found it."""
    assert not cut.complete or whole.distinct_states == cut.distinct_states
    states = cut.distinct_states
    assert [whole.state(i) for i in range(states)] == cut.states
    assert list(whole.parent[:states]) == list(cut.parent)
    assert whole.via[:states] == cut.via
    edges = len(cut.edge_src)
    assert list(whole.edge_src[:edges]) == list(cut.edge_src)
    assert list(whole.edge_dst[:edges]) == list(cut.edge_dst)
    assert [whole.labels[i] for i in whole.edge_label[:edges]] == [cut.labels[i] for i in cut.edge_label]
    assert cut.violations.keys() <= whole.violations.keys()
    for name in cut.violations:
        assert whole.counterexample(name) == cut.counterexample(name)
    if cut.complete:
        assert_same_runs(cut, whole)


def compare_with_liveness(cfg: Config, readable_liveness: bool = True, readable_prefix: int | None = None) -> None:
    # Fairness changes no state or edge, only which cycles are fair: one exploration per
    # engine, and its verdicts under each fairness value. The readable run's graph is the
    # packed one's, edge for edge (compare_engines), so its own verdicts are a check of its
    # run interface, which the slow run makes on every other combination.
    if readable_prefix is None:
        readable, packed, vector = compare_engines(cfg, on_packed_tables=True)
    else:
        assert not readable_liveness  # the readable run is a prefix: no graph to decide liveness on
        # The readable model on the first `readable_prefix` states only (it explores at a
        # third of the packed engine's speed), the packed and vector engines whole.
        packed = explore_config(cfg, engine="packed", record_edges=True)
        assert_prefix_of(readable_exploration(cfg, max_states=readable_prefix), packed)
        vector = vector_engine.explore_vector(model_for(cfg), record_edges=True, engine=packed.engine)
        assert_same_vector_run(packed, vector)
    for fairness in switch_values()["fairness"]:
        model = model_for(cfg.evolve(fairness=fairness))
        expected = liveness_verdicts(packed, model)
        assert all(verdict.holds is not None for verdict in expected.values())
        if readable_liveness:
            assert liveness_verdicts(readable, model) == expected
        assert liveness_verdicts(vector, model) == expected  # verdicts and lassos, note for note


def compare_at_sweep_constants(switches: dict, readable_liveness: bool = True, readable_prefix: int | None = None) -> None:
    whole, prefix = sweep_constants(switches)
    compare_with_liveness(Config(**whole, **switches), readable_liveness, readable_prefix)
    if prefix is not None:
        compare_engines(Config(**prefix, **switches), max_states=PREFIX if readable_prefix is None else READABLE_PREFIX)


# In the quick run the readable model explores each pairwise combination's first
# READABLE_PREFIX states (every state of the smallest): the packed engine is the readable
# model there, state for state and edge for edge, and the vector engine is the packed one
# on the whole exploration, with liveness.
# The slow run compares the readable model on the whole of each (below).
READABLE_PREFIX = 500


@pytest.mark.parametrize("switches", sweeps.QUICK, ids=combination_id)
def test_same_exploration_and_liveness_for_a_pairwise_covering_of_the_switches(switches):
    compare_at_sweep_constants(switches, readable_liveness=False, readable_prefix=READABLE_PREFIX)


@SLOW
@pytest.mark.parametrize("switches", sweeps.QUICK, ids=combination_id)
def test_same_exploration_and_liveness_for_a_pairwise_covering_whole_on_the_readable_model(switches):
    compare_at_sweep_constants(switches)


@SLOW
@pytest.mark.parametrize("switches", sweeps.SLOW, ids=combination_id)
def test_same_exploration_and_liveness_for_a_3_wise_covering_and_a_sample_of_the_switches(switches):
    compare_at_sweep_constants(switches)


@SLOW
@pytest.mark.parametrize("switches", [s for s in sweeps.QUICK if is_seal_combination(s) and s["alias"] == "none"],
                         ids=combination_id)
def test_same_exploration_and_liveness_for_the_pairwise_seal_combinations_at_two_processes(switches):
    compare_with_liveness(Config(MaxTime=1, **switches))
