"""Leads-to under weak fairness: the algorithm on hand-made graphs, then on the protocol."""

from __future__ import annotations

import attrs
import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import publish_blind_to_standing, replace_action
from protocol.configurations.named import lookup
from protocol.engine.checker import explore
from protocol.engine.liveness import (FairGraph, QuotientCycle, Symmetry, find_violation, find_violation_reduced,
                               leads_to_masks, strongly_connected_components)
from protocol.run import check
from protocol.model.next import replay


def graph(n: int, edges, fair=("f",)) -> FairGraph:
    """A graph of n states from (source, label, destination) triples; labels in `fair`
    are the weakly fair families (one family per label)."""
    labels = sorted({label for _, label, _ in edges} | set(fair))
    label_id = {label: i for i, label in enumerate(labels)}
    return FairGraph(
        n,
        [src for src, _, _ in edges],
        [label_id[label] for _, label, _ in edges],
        [dst for _, _, dst in edges],
        families=list(fair),
        label_family=[label if label in fair else None for label in labels],
    )


def mask(n: int, members) -> bytearray:
    return bytearray(1 if v in members else 0 for v in range(n))


def stall(g: FairGraph, unmet, premise=None):
    """The counterexample to `premise ~> not unmet` (premise: everywhere by default)."""
    premise = set(range(g.n)) if premise is None else set(premise)
    triggers = mask(g.n, set(unmet) & premise)
    return find_violation(g, [0], [(triggers, mask(g.n, unmet))])


def states_of(found) -> list[int]:
    return [state for _, state in found.lasso.steps]


def test_a_cycle_with_a_fair_action_enabled_throughout_and_never_taken_is_no_counterexample():
    g = graph(4, [(0, "g", 1), (1, "g", 2), (2, "g", 1), (1, "f", 3), (2, "f", 3)])
    assert stall(g, unmet={1, 2}) is None


def test_a_cycle_where_the_fair_action_is_disabled_somewhere_is_a_counterexample():
    g = graph(4, [(0, "g", 1), (1, "g", 2), (2, "g", 1), (1, "f", 3)])
    found = stall(g, unmet={1, 2})
    assert states_of(found) == [0, 1, 2]
    assert found.lasso.loop == 1 and not found.lasso.stutters
    assert found.lasso.fairness == (("f", "disabled", 2),)


def test_a_cycle_that_takes_the_fair_action_it_keeps_enabled_is_a_counterexample():
    g = graph(4, [(0, "g", 1), (1, "f", 2), (2, "g", 1), (2, "f", 3)])
    found = stall(g, unmet={1, 2})
    assert found.lasso.fairness == (("f", "taken", 1),)
    assert states_of(found) == [0, 1, 2] and not found.lasso.stutters


def test_the_cycle_takes_every_fair_family_that_stays_enabled():
    # f and h are enabled in 1, 2 and 3 (each escapes to 4); the cycle 1 -f-> 2 -g-> 3 -h-> 1.
    escapes = [(v, family, 4) for v in (1, 2, 3) for family in ("f", "h")]
    g = graph(5, [(0, "g", 1), (1, "f", 2), (2, "g", 3), (3, "h", 1), *escapes], fair=("f", "h"))
    found = stall(g, unmet={1, 2, 3})
    assert states_of(found) == [0, 1, 2, 3] and found.lasso.loop == 1
    assert found.lasso.fairness == (("f", "taken", 1), ("h", "taken", 3))
    assert g.label_bit[found.lasso.back] == 0b10  # the back step takes h (family 1)


def test_a_detour_the_cycle_does_not_need_is_cut_out():
    # f is disabled in 1 and 3, h only in 3 (each escapes to 4 elsewhere). Going for f
    # first reaches 1, then h needs 3: 0 1 0 2 3; the cycle 0 -> 2 -> 3 alone is fair.
    escapes = [(0, "f", 4), (2, "f", 4), (0, "h", 4), (1, "h", 4), (2, "h", 4)]
    g = graph(5, [(0, "g", 1), (1, "g", 0), (0, "g", 2), (2, "g", 3), (3, "g", 0), *escapes], fair=("f", "h"))
    found = stall(g, unmet={0, 1, 2, 3})
    assert states_of(found) == [0, 2, 3] and found.lasso.length == 3
    assert found.lasso.fairness == (("f", "disabled", 2), ("h", "disabled", 2))


def test_a_cycle_that_must_pass_a_state_twice_counts_it_once():
    # a, b and c stay enabled in 0, 1 and 2 (escaping to 3). Only 0 -a-> 1 takes a, only
    # 1 -b-> 0 takes b, only 1 -c-> 2 takes c: no cycle visiting each state once takes
    # all three, so the fair cycle passes 0 and 1 twice; spec section 7 counts 3 states.
    escapes = [(0, "b", 3), (0, "c", 3), (1, "a", 3), (2, "a", 3), (2, "b", 3), (2, "c", 3)]
    edges = [(0, "a", 1), (1, "b", 0), (1, "c", 2), (2, "g", 0), *escapes]
    g = graph(4, edges, fair=("a", "b", "c"))
    found = stall(g, unmet={0, 1, 2})
    assert found.lasso.length == 3 and set(states_of(found)) == {0, 1, 2}
    assert_is_fair_lasso(g, edges, ("a", "b", "c"), {0, 1, 2}, {0, 1, 2, 3}, found.lasso)


def test_a_terminal_state_where_a_fair_action_is_enabled_is_no_counterexample():
    g = graph(3, [(0, "g", 1), (1, "f", 2)])
    assert stall(g, unmet={1}) is None


def test_a_terminal_state_where_no_fair_action_is_enabled_stutters_forever():
    g = graph(3, [(0, "g", 1), (1, "g", 2)])
    found = stall(g, unmet={1})
    assert states_of(found) == [0, 1]
    assert found.lasso.stutters and found.lasso.loop == 1


def test_a_fair_self_loop_is_a_counterexample_an_unfair_one_is_not():
    taken = graph(3, [(0, "g", 1), (1, "f", 1), (1, "g", 2)])
    assert stall(taken, unmet={1}).lasso.fairness == (("f", "taken", 1),)
    idle = graph(3, [(0, "g", 1), (1, "g", 1), (1, "f", 2)])
    assert stall(idle, unmet={1}) is None


def test_of_two_components_only_the_fair_one_is_reported():
    # 1<->2 keeps f enabled and never takes it; 3<->4 disables it in 4.
    edges = [(0, "g", 1), (1, "g", 2), (2, "g", 1), (1, "f", 5), (2, "f", 5),
             (0, "g", 3), (3, "g", 4), (4, "g", 3), (3, "f", 5)]
    found = stall(graph(6, edges), unmet={1, 2, 3, 4})
    assert set(states_of(found)[1:]) == {3, 4}


def test_without_fair_families_every_stalled_state_may_stutter():
    g = graph(3, [(0, "f", 1), (1, "f", 2)], fair=())
    found = stall(g, unmet={1})
    assert states_of(found) == [0, 1] and found.lasso.stutters


def test_the_prefix_passes_the_premise_even_when_a_shorter_path_skips_it():
    # 0 -> 2 directly, or 0 -> 1 -> 2; only state 1 satisfies the premise.
    g = graph(3, [(0, "g", 2), (0, "g", 1), (1, "f", 2)])
    assert states_of(stall(g, unmet={1, 2}, premise={1})) == [0, 1, 2]


def test_once_the_conclusion_holds_the_prefix_needs_the_premise_again():
    # 0 -> 1 (premise) -> 2 (conclusion) -> 3 (stalls) is shorter than 0 -> 4 -> 5 -> 6 (premise) -> 3,
    # but a run through 2 has met the obligation of 1, and 3 alone owes nothing.
    edges = [(0, "g", 1), (1, "f", 2), (2, "f", 3), (0, "g", 4), (4, "g", 5), (5, "g", 6), (6, "f", 3)]
    found = stall(graph(7, edges), unmet={1, 3, 6}, premise={1, 6})
    assert states_of(found) == [0, 4, 5, 6, 3]


def test_a_premise_that_stops_holding_still_obliges_the_conclusion():
    g = graph(3, [(0, "g", 1), (1, "f", 2)])
    assert states_of(stall(g, unmet={1, 2}, premise={1})) == [0, 1, 2]


def test_reaching_the_conclusion_ends_the_obligation():
    g = graph(3, [(0, "g", 1), (1, "g", 2)])
    assert stall(g, unmet={1}, premise={0, 1, 2}) is not None
    assert stall(g, unmet={0, 2}, premise={1}) is None  # premise holds only where the conclusion does


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))))
))
def test_tarjan_splits_like_networkx(case):
    n, edges = case
    g = graph(n, [(src, "g", dst) for src, dst in edges], fair=())
    component, count = strongly_connected_components(g.offsets, g.targets, n)
    ours = {frozenset(v for v in range(n) if component[v] == c) for c in range(count)}
    reference = nx.DiGraph()
    reference.add_nodes_from(range(n))
    reference.add_edges_from(edges)
    assert ours == {frozenset(c) for c in nx.strongly_connected_components(reference)}


def test_the_bench_splits_a_graph_by_tarjan_and_by_networkx():
    from protocol.tools.bench import measure

    ours, theirs = (measure("Holds", {"P": 2, "D": 1, "MaxTime": 1}, mode, max_states=10**6)
                    for mode in ("scc:tarjan", "scc:networkx"))
    assert ours["complete"] and ours["edges"] == theirs["edges"] > 0
    assert ours["peak_memory_mb"] > 0 and theirs["seconds"] >= 0


def fair_stall_exists(n, edges, fair, unmet, premise) -> bool:
    """The oracle, by networkx: among the unmet states reachable without meeting the
    conclusion from one where the premise holds, some component can hold a fair
    behaviour forever (every state is reachable from the initial one)."""
    whole = nx.MultiDiGraph()
    whole.add_nodes_from(range(n))
    whole.add_edges_from((src, dst, label) for src, label, dst in edges)
    unmet_only = whole.subgraph(unmet)
    triggers = set(unmet) & set(premise)
    stalled = unmet_only.subgraph(triggers.union(*(nx.descendants(unmet_only, v) for v in triggers)))
    enabled = {v: {label for _, _, label in whole.out_edges(v, keys=True)} for v in range(n)}
    for component in nx.strongly_connected_components(stalled):
        inside = {label for _, w, label in stalled.out_edges(component, keys=True) if w in component}
        if all(any(f not in enabled[v] for v in component) or f in inside for f in fair):
            return True
    return False


def assert_is_fair_lasso(g, edges, fair, unmet, premise, lasso):
    """The lasso is a run of the graph from state 0 that, from a state where the premise
    holds, stays unmet, and every fair family is disabled in its cycle or taken by it."""
    names = sorted({label for _, label, _ in edges} | set(fair))
    steps = [(None if label is None else names[label], v) for label, v in lasso.steps]
    assert steps[0] == (None, 0)
    present = set(edges)
    assert all((u, label, v) in present for (_, u), (label, v) in zip(steps, steps[1:]))
    cycle = [v for _, v in steps[lasso.loop:]]
    taken = {label for label, _ in steps[lasso.loop + 1:]}
    if not lasso.stutters:
        taken.add(names[lasso.back])
        assert (cycle[-1], names[lasso.back], cycle[0]) in present
    stall = len(steps)
    while stall > 0 and steps[stall - 1][1] in unmet:
        stall -= 1
    assert stall <= lasso.loop and any(v in premise for _, v in steps[stall:])
    enabled = {v: {label for u, label, _ in edges if u == v} for v in cycle}
    if lasso.stutters:
        taken = set()
        cycle = cycle[-1:]
    assert all(any(f not in enabled[v] for v in cycle) or f in taken for f in fair)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_stall_is_found_exactly_when_one_exists_and_its_lasso_is_a_fair_run(data):
    n = data.draw(st.integers(2, 8))
    label = st.sampled_from(["f", "h", "g"])
    tree = [(data.draw(st.integers(0, v - 1)), data.draw(label), v) for v in range(1, n)]
    extra = data.draw(st.lists(st.tuples(st.integers(0, n - 1), label, st.integers(0, n - 1)), max_size=3 * n))
    edges = list(dict.fromkeys(tree + extra))  # every state reachable from 0; no duplicate edge
    fair = data.draw(st.sampled_from([(), ("f",), ("f", "h")]))
    unmet = data.draw(st.sets(st.integers(0, n - 1)))
    premise = data.draw(st.sets(st.integers(0, n - 1)))
    g = graph(n, edges, fair)
    found = stall(g, unmet, premise)
    assert (found is not None) == fair_stall_exists(n, edges, fair, unmet, premise)
    if found is not None:
        assert_is_fair_lasso(g, edges, fair, unmet, premise, found.lasso)


# --------------------------------------------- a symmetric toy, reduced and not
#
# Two processes, each holding a small number; a state is the pair. The reduced
# search keeps the sorted pair and labels each edge `action id * 2 + swapped`.
# Pair p of the leads-to speaks of process p.

SWAP = Symmetry(label_permutation=[], pair_maps=[(0, 1), (1, 0)])


def toy(step, names, fair, reduced: bool):
    """The toy system whose action `name` on process p is step(name, p, state) (None:
    disabled), explored from (0, 0): (its FairGraph, its states, its action labels)."""
    actions = [(name, p) for name in names for p in (0, 1)]

    def successors(s):
        found = []
        for i, (name, p) in enumerate(actions):
            t = step(name, p, s)
            if t is not None:
                swapped = reduced and t[1] < t[0]
                found.append((2 * i + swapped, t[::-1] if swapped else t) if reduced else (i, t))
        return found

    labels = [action for action in actions for _ in (0, 1)] if reduced else actions
    run = explore([(0, 0)], successors, labels=labels, record_edges=True)
    families = [action for action in actions if action[0] in fair]
    g = FairGraph(run.distinct_states, run.edge_src, run.edge_label, run.edge_dst, families,
                  [label if label[0] in fair else None for label in labels])
    return g, run.states, labels


def toy_violation(step, names, fair, premise, conclusion, reduced: bool):
    g, states, labels = toy(step, names, fair, reduced)
    pairs = [(lambda s, p=p: premise(s[p]), lambda s, p=p: conclusion(s[p])) for p in (0, 1)]
    masks = leads_to_masks(states, pairs)
    if not reduced:
        return find_violation(g, [0], masks), states, labels
    symmetry = SWAP._replace(label_permutation=[label % 2 for label in range(len(labels))])
    return find_violation_reduced(g, [0], masks, symmetry), states, labels


def start_finish(name, p, s):
    """Start(p) takes process p from 0 to 1, Finish(p) from 1 to 2."""
    wanted = {"Start": 0, "Finish": 1}[name]
    return None if s[p] != wanted else tuple(x + 1 if q == p else x for q, x in enumerate(s))


def flip(name, p, s):
    """Flip(p) toggles process p's bit: every state lies on a cycle."""
    return tuple(1 - x if q == p else x for q, x in enumerate(s))


def test_reduced_liveness_reports_the_real_runs_pair_and_the_unreduced_length():
    # Start(0) is enumerated first; its successor (1, 0) is stored swapped, as (0, 1),
    # where the stalled process is called 1. The real run's pair is process 0's.
    options = dict(step=start_finish, names=("Start", "Finish"), fair=(),
                   premise=lambda x: x >= 1, conclusion=lambda x: x == 2)
    full, _, _ = toy_violation(reduced=False, **options)
    reduced, states, labels = toy_violation(reduced=True, **options)
    assert (reduced.pair, len(reduced.lasso.steps)) == (full.pair, len(full.lasso.steps)) == (0, 2)
    assert reduced.lasso.stutters
    label, stall = reduced.lasso.steps[-1]
    assert states[stall] == (0, 1) and labels[label] == ("Start", 0) and label % 2 == 1


def test_reduced_liveness_agrees_that_fair_finishing_meets_every_obligation():
    options = dict(step=start_finish, names=("Start", "Finish"), fair=("Finish",),
                   premise=lambda x: x >= 1, conclusion=lambda x: x == 2)
    assert toy_violation(reduced=False, **options)[0] is None
    assert toy_violation(reduced=True, **options)[0] is None


def test_a_cycle_in_a_reduced_stalled_region_is_refused_not_guessed():
    # Unreduced, the cycles that keep bit 0 at 0 starve the always enabled Flip(0): no
    # counterexample. Reduced, a cycle may swap the processes on each turn, so the
    # representatives alone cannot say which process it starves.
    options = dict(step=flip, names=("Flip",), fair=("Flip",),
                   premise=lambda x: True, conclusion=lambda x: x == 1)
    assert toy_violation(reduced=False, **options)[0] is None
    with pytest.raises(QuotientCycle):
        toy_violation(reduced=True, **options)


# ------------------------------------------------------------------ the protocol


@pytest.mark.parametrize("name", ["Holds", "HoldsAcquire"])
def test_the_sound_designs_never_stall_compaction(name):
    assert check(lookup(name)).properties["CompactionNotStalled"].holds is True


def test_without_fairness_compaction_stalls_right_after_the_first_allowance():
    verdict = check(lookup("HoldsUnfair")).properties["CompactionNotStalled"]
    trace = verdict.trace
    assert verdict.holds is False and trace.length == 2
    assert [str(step.action) for step in trace.steps] == ["None", "AdvancePolicy"]
    assert trace.stutters and trace.loop == 1
    assert trace.steps[-1].state.sent > trace.steps[-1].state.since[0]


@pytest.mark.parametrize("symmetry", [False, True], ids=["full", "symmetry"])
def test_a_publisher_blind_to_the_standing_hold_stalls_even_under_fairness(monkeypatch, symmetry):
    replace_action(monkeypatch, "Publish", publish_blind_to_standing)
    verdict = check(lookup("Holds"), symmetry=symmetry).properties["CompactionNotStalled"]
    assert verdict.holds is False
    last = verdict.trace.steps[-1].state
    assert verdict.trace.stutters and not any(last.mq) and not any(last.iq)
    assert any("InterStep(0) is disabled" in note for note in verdict.trace.notes)


def test_symmetry_finds_the_blind_publishers_stall_at_the_unreduced_length(monkeypatch):
    replace_action(monkeypatch, "Publish", publish_blind_to_standing)
    named = lookup("Holds").with_constants({"P": 3, "MaxTime": 1})
    full, reduced = (check(named, symmetry=symmetry).properties["CompactionNotStalled"]
                     for symmetry in (False, True))
    assert reduced.holds is full.holds is False
    assert reduced.trace_length == full.trace_length
    replayed = replay(named.config, [step.action for step in reduced.trace.steps[1:]])
    assert [step.state for step in replayed] == [step.state for step in reduced.trace.steps]
    stalled = reduced.trace.notes[0].split(" fails")[0]  # e.g. "sent >= 1 ~> since[2] >= 1"
    p = int(stalled.split("since[")[1].split("]")[0])
    assert reduced.trace.steps[-1].state.since[p] < reduced.trace.steps[-1].state.sent


def test_liveness_has_no_verdict_without_the_whole_graph():
    holds = lookup("Holds")
    assert "CompactionNotStalled" not in check(holds, liveness=False).properties
    assert check(holds, max_states=100).properties["CompactionNotStalled"].holds is None


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_while_deciding_liveness_keeps_the_safety_verdicts(monkeypatch, workers):
    """An interrupt after the search leaves liveness unknown and the run not as
    expected, and the one line on stderr says what was cut short."""
    import protocol.run
    from protocol.cli.check import interrupted_why

    def interrupted(run, *model_and_cfg):
        raise KeyboardInterrupt

    monkeypatch.setattr(protocol.run, "liveness_verdicts", interrupted)
    result = protocol.run.check(lookup("Holds").with_constants({"MaxTime": 1}), workers=workers)
    assert result.complete and result.interrupted
    assert result.properties["I1"].holds is True
    assert result.properties["CompactionNotStalled"].holds is None
    assert not result.as_expected
    assert "deciding liveness" in interrupted_why([result])
    assert "cut short" in interrupted_why([attrs.evolve(result, complete=False)])


def test_a_trace_counts_a_state_its_cycle_passes_twice_once():
    """Spec section 7: each state of prefix and cycle once, even when fairness makes
    the cycle pass a state twice."""
    from protocol.model.state import initial
    from protocol.model.config import HOLDS
    from protocol.model.trace import Step, Trace

    first = initial(HOLDS)
    second = first._replace(upper=1)
    trace = Trace("CompactionNotStalled", (Step(None, first), Step("a", second), Step("b", first)), loop=0)
    assert trace.length == 2 and len(trace.steps) == 3
