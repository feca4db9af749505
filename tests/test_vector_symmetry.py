"""Liveness under symmetry on the vector engine: the decision on arrays is liveness.py's
`find_violation_reduced` (the same verdicts, lassos and refusals, on random reduced
graphs and on the toys), and `check --symmetry` on the vector engine gives the packed
engine's verdicts and lassos on every named configuration symmetry applies to and on
the switch sweeps' combinations (tests/sweeps.py: a 3-wise covering and a seeded sample)
at two processes."""

import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

from helpers import combination_id
from protocol.model.config import Config
from protocol.configurations.named import NamedConfig, named_configurations
from protocol.engine import liveness
from protocol.engine.liveness import QuotientCycle, Symmetry
from protocol.engine.vector.search import vector_refusal
from protocol.engine.vector.liveness import VectorGraph
from protocol.model.next import model_for, replay
from protocol.run import check
from sweeps import SELECTED, sweep_constants
from test_liveness import flip, start_finish, toy
from test_symmetry import CONSTANTS, SYMMETRIC, symmetric_cases, verdicts
from test_vector import assert_same_reduced_exploration

SLOW = pytest.mark.slow


def as_vector(graph: liveness.FairGraph) -> VectorGraph:
    return VectorGraph(np.array(graph.offsets, dtype=np.int64), np.array(graph.labels, dtype=np.int64),
                       np.array(graph.targets, dtype=np.int64), graph.families, label_families(graph))


def label_families(graph: liveness.FairGraph) -> list:
    """Label id -> its family, read back from the graph's bits."""
    return [graph.families[bit.bit_length() - 1] if bit else None for bit in graph.label_bit]


def both_decisions(graph: liveness.FairGraph, pairs, symmetry: Symmetry):
    """(liveness.py's decision, the vector one's) on the same graph: a Counterexample, None,
    or the QuotientCycle class where it refuses."""
    masks = [(bytearray(triggers), bytearray(unmet)) for triggers, unmet in pairs]
    arrays = [(np.array(triggers, dtype=bool), np.array(unmet, dtype=bool)) for triggers, unmet in pairs]
    found = []
    for decide in (lambda: liveness.find_violation_reduced(graph, [0], masks, symmetry),
                   lambda: as_vector(graph).find_violation_reduced([0], arrays, symmetry)):
        try:
            found.append(decide())
        except QuotientCycle:
            found.append(QuotientCycle)
    return found


# ------------------------------------------------- the decision on arrays


@st.composite
def reduced_graphs(draw):
    """A random graph reached from state 0, each label naming a permutation that sends
    each of a few pairs to another (pair maps that are permutations, number 0 the
    identity), with fair families and the pairs' masks."""
    n = draw(st.integers(1, 12))
    labels = draw(st.integers(1, 6))
    m = draw(st.integers(1, 3))
    orders = draw(st.lists(st.permutations(range(m)), min_size=0, max_size=3))
    pair_maps = [tuple(range(m)), *map(tuple, orders)]
    label_permutation = [draw(st.integers(0, len(pair_maps) - 1)) for _ in range(labels)]
    out = {v: [] for v in range(n)}
    for v in range(1, n):
        out[draw(st.integers(0, v - 1))].append((draw(st.integers(0, labels - 1)), v))
    cyclic = draw(st.booleans())  # mostly acyclic, as the protocol's graphs are
    for v in range(n):
        for _ in range(draw(st.integers(0, 3))):
            low = 0 if cyclic else v + 1
            if low < n:
                out[v].append((draw(st.integers(0, labels - 1)), draw(st.integers(low, n - 1))))
    edges = [(v, label, w) for v in range(n) for label, w in draw(st.permutations(out[v]))]
    families = draw(st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=3))
    label_family = [draw(st.sampled_from([None, *families])) for _ in range(labels)]
    pairs = []
    for _ in range(m):
        unmet = [draw(st.booleans()) for _ in range(n)]
        pairs.append(([u and draw(st.booleans()) for u in unmet], unmet))
    src, lab, dst = (list(column) for column in zip(*edges)) if edges else ([], [], [])
    graph = liveness.FairGraph(n, src, lab, dst, families, label_family)
    return graph, pairs, Symmetry(label_permutation, pair_maps)


@given(reduced_graphs())
def test_the_reduced_decision_on_arrays_is_liveness_pys(case):
    reference, vector = both_decisions(*case)
    assert vector == reference
    graph, pairs, symmetry = case
    arrays = as_vector(graph)
    if not arrays.cyclic().any():  # the sweep the acyclic graphs take, against the search
        moved = np.array(liveness.pair_map_per_label(symmetry), dtype=np.int64).reshape(-1, len(pairs))
        unmet = np.array([unmet for _, unmet in pairs], dtype=bool).reshape(len(pairs), graph.n)
        masks = [(np.array(triggers, dtype=bool), mask) for (triggers, _), mask in zip(pairs, unmet)]
        assert (arrays.swept_product_region(masks, moved).tolist()
                == arrays.searched_product_region(masks, moved, unmet).tolist()
                == list(map(bool, liveness.product_region(graph, pairs, symmetry))))


def test_a_stall_reached_through_a_renaming_names_the_real_runs_pair():
    # 0 -> 1 by label 0 (the identity), 0 -> 2 by label 1 (swapping the two pairs); fair
    # family "a" is enabled in 0 only, so 1 and 2 stutter. Pair 0 is triggered in 0 and
    # met in 1; in 2 the swap calls it pair 1, unmet there: the stall is 2, reached by label 1.
    graph = liveness.FairGraph(3, [0, 0], [0, 1], [1, 2], ["a"], ["a", "a"])
    pairs = [([True, False, False], [True, False, False]), ([False, False, False], [False, False, True])]
    swap = Symmetry([0, 1], [(0, 1), (1, 0)])
    reference, vector = both_decisions(graph, pairs, swap)
    assert vector == reference
    assert (vector.pair, vector.lasso.steps, vector.lasso.back) == (0, ((None, 0), (1, 2)), None)
    no_swap = Symmetry([0, 0], [(0, 1), (1, 0)])  # without the renaming pair 0 stays pair 0, met in 2
    assert both_decisions(graph, pairs, no_swap) == [None, None]


def toy_pairs(states, premise, conclusion):
    pairs = [(lambda s, p=p: premise(s[p]), lambda s, p=p: conclusion(s[p])) for p in (0, 1)]
    return liveness.leads_to_masks(states, pairs)


def test_the_toy_stall_is_the_real_runs_pair_and_a_cycle_is_refused():
    graph, states, labels = toy(start_finish, ("Start", "Finish"), (), reduced=True)
    swap = Symmetry([label % 2 for label in range(len(labels))], [(0, 1), (1, 0)])
    masks = toy_pairs(states, lambda x: x >= 1, lambda x: x == 2)
    reference, vector = both_decisions(graph, masks, swap)
    assert vector == reference and vector.pair == 0 and len(vector.lasso.steps) == 2 and vector.lasso.stutters
    graph, states, labels = toy(flip, ("Flip",), ("Flip",), reduced=True)
    swap = Symmetry([label % 2 for label in range(len(labels))], [(0, 1), (1, 0)])
    assert both_decisions(graph, toy_pairs(states, lambda x: True, lambda x: x == 1), swap) == [QuotientCycle] * 2


# ------------------------------------------------- check --symmetry, both engines


def assert_same_reduced_liveness(named: NamedConfig) -> dict:
    """The packed and the vector engine's check under symmetry, liveness included: the same
    counts, verdicts, traces and lassos (each a real run of the model)."""
    packed = check(named, symmetry=True, engine="packed")
    why = vector_refusal(model_for(named.config))
    vector = check(named, symmetry=True, engine=None if why else "vector")
    assert vector.engine == ({"name": "packed", "why": why} if why else {"name": "vector"})
    assert (vector.distinct_states, vector.reduced_states, vector.transitions, vector.depth) == (
        packed.distinct_states, packed.reduced_states, packed.transitions, packed.depth)
    assert verdicts(vector) == verdicts(packed)
    assert vector.properties == packed.properties  # the traces, lassos and premises reached too
    return verdicts(vector)


@SLOW  # the quick run's representatives: the random graphs above, and the violation below
@pytest.mark.parametrize("name, constants", symmetric_cases(CONSTANTS, ["defaults", "P3-D1-T1"]))
def test_the_engines_agree_under_symmetry_with_liveness(name, constants):
    assert_same_reduced_liveness(named_configurations()[name].with_constants(constants))


def reducible_sweep_config(switches: dict) -> Config:
    """The sweep's combination at two processes (symmetry reduces nothing at one) and the
    sweep's other constants; skipped where symmetry or the vector engine does not apply
    (a special process; a model the vector engine refuses, where both engines would be
    the packed one)."""
    constants, _ = sweep_constants(switches)
    cfg = Config(**{**constants, "P": 2}, **switches)
    model = model_for(cfg)
    if model.symmetry_refusal is not None:
        pytest.skip("a special process: symmetry does not apply")
    if vector_refusal(model) is not None:
        pytest.skip(f"the vector engine does not apply: {vector_refusal(model)}")
    return cfg


@SLOW
@pytest.mark.parametrize("switches", SELECTED, ids=combination_id)
def test_the_engines_agree_under_symmetry_on_the_switch_sweeps(switches):
    # The packed engine is the reference (the complete sweep, PROTOCOL_SWEEP=complete:
    # about 700 CPU seconds for the 296 compared).
    assert_same_reduced_liveness(NamedConfig("sweep", reducible_sweep_config(switches)))


@SLOW
@pytest.mark.parametrize("switches", SELECTED, ids=combination_id)
def test_the_reduced_search_without_edges_agrees_on_the_switch_sweeps(switches):
    # Safety alone under symmetry keeps no edges, a path of its own through the search.
    assert_same_reduced_exploration(reducible_sweep_config(switches))


@pytest.mark.quick
def test_a_liveness_violation_under_symmetry_has_the_unreduced_lasso_length():
    named = named_configurations()["HoldsUnfair"].with_constants({"P": 3, "D": 1, "MaxTime": 1})
    full = check(named, engine="vector").properties["CompactionNotStalled"]
    reduced = assert_same_reduced_liveness(named)
    assert reduced["CompactionNotStalled"] == (False, full.trace_length) == (False, 2)
    trace = check(named, symmetry=True).violation("CompactionNotStalled")
    assert trace.stutters
    replayed = replay(named.config, [step.action for step in trace.steps[1:]])
    assert [step.state for step in replayed] == [step.state for step in trace.steps]


@SLOW
def test_check_symmetry_with_liveness_runs_the_vector_engine(capsys):
    from protocol.cli import main

    assert main(["check", "HoldsRouted", "--symmetry", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["engine"] == {"name": "vector"} and "CompactionNotStalled" in record["properties"]


def test_every_symmetric_configuration_is_compared():
    compared = {case.values[0] for case in symmetric_cases(CONSTANTS, ["defaults", "P3-D1-T1"])}
    assert compared == set(SYMMETRIC) and len(SYMMETRIC) > 10
