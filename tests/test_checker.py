"""The checker on toy models whose counts are known by hand."""

import attrs
import pytest

from protocol.engine.checker import Guarded, explore

IDLE, WAITING, CRITICAL = "idle", "waiting", "critical"


def counter(top: int):
    """A counter from 0 to `top`, stepping up or down by one."""

    def successors(n):
        found = []
        if n < top:
            found.append(("Inc", n + 1))
        if n > 0:
            found.append(("Dec", n - 1))
        return found

    return successors


def mutex(locked: bool):
    """Two processes: idle -> waiting -> critical -> idle. With `locked`, a
    process enters only while the other is not critical."""

    def successors(state):
        found = []
        for p in (0, 1):
            mine, other = state[p], state[1 - p]
            if mine == IDLE:
                nxt = WAITING
            elif mine == WAITING:
                if locked and other == CRITICAL:
                    continue
                nxt = CRITICAL
            else:
                nxt = IDLE
            found.append((f"Step({p})", tuple(nxt if q == p else state[q] for q in (0, 1))))
        return found

    return successors


def mutual_exclusion(state) -> bool:
    return state != (CRITICAL, CRITICAL)


def test_counter_counts_states_transitions_and_depth():
    run = explore([0], counter(5))
    assert (run.distinct_states, run.transitions, run.depth, run.complete) == (6, 10, 6, True)


def test_counter_shortest_trace_to_a_state_invariant():
    run = explore([0], counter(9), {"below 4": lambda n: n < 4})
    assert run.counterexample("below 4") == [(None, 0), ("Inc", 1), ("Inc", 2), ("Inc", 3), ("Inc", 4)]


def test_counter_shortest_trace_to_a_transition_property():
    run = explore([0], counter(9), {}, {"never down": lambda before, after: after >= before})
    assert run.counterexample("never down") == [(None, 0), ("Inc", 1), ("Dec", 0)]
    assert run.violations["never down"].state == 1


def test_mutex_with_a_lock_holds_with_known_counts():
    run = explore([(IDLE, IDLE)], mutex(locked=True), {"MutualExclusion": mutual_exclusion})
    assert (run.distinct_states, run.transitions, run.depth) == (8, 14, 4)
    assert run.violations == {}


def test_mutex_without_a_lock_breaks_mutual_exclusion_in_five_states():
    run = explore([(IDLE, IDLE)], mutex(locked=False), {"MutualExclusion": mutual_exclusion})
    trace = run.counterexample("MutualExclusion")
    assert len(trace) == 5
    assert trace[-1][1] == (CRITICAL, CRITICAL)
    assert run.distinct_states == 9


def test_max_states_cuts_the_search():
    run = explore([0], counter(100), max_states=3)
    assert (run.distinct_states, run.complete) == (3, False)
    assert run.depth == 3  # the states discovered so far lie on levels 1..3


def weighted_counts(run, successors, weigh) -> tuple[int, int]:
    """The weight and weighted transitions of a (possibly cut) run, recounted from its
    states: every expanded state's full out-degree, and the steps taken from the one
    cut mid-way."""
    degrees = [len(successors(run.states[i])) for i in range(run.expanded)]
    weighted = sum(weigh(run.states[i]) * degree for i, degree in enumerate(degrees))
    if run.transitions > sum(degrees):
        weighted += weigh(run.states[run.expanded]) * (run.transitions - sum(degrees))
    return sum(map(weigh, run.states)), weighted


@pytest.mark.parametrize("max_states", [None, 1, 7, 10, 11, 12, 40])
def test_max_states_bounds_the_weight_and_trims_weighted_steps_alike(max_states):
    weigh = lambda n: 1 + n % 3  # noqa: E731 - each stored state stands for 1 to 3 states
    run = explore([0], counter(9), weigh=weigh, max_states=max_states)
    assert (run.weight, run.weighted_transitions) == weighted_counts(run, counter(9), weigh)
    if max_states is not None and not run.complete:
        assert run.weight <= max_states < run.weight + weigh(run.distinct_states)  # the next one did not fit


def test_symmetry_max_states_counts_unreduced_states():
    import attrs

    from protocol.configurations.named import lookup
    from protocol.run import explore_config

    cfg = attrs.evolve(lookup("Holds").config, P=3)
    run = explore_config(cfg, engine="packed", symmetry=True, max_states=1000)  # the checker's weighed search
    orbit_size = run.reduction.orbit_size
    assert not run.complete and 1000 - 6 < run.weight <= 1000  # an orbit of 3 processes has at most 6 states
    assert (run.weight, run.weighted_transitions) == weighted_counts(run, run.engine.successors, orbit_size)


def test_stop_on_violation_stops_at_the_first():
    full = explore([0], counter(50), {"below 3": lambda n: n < 3})
    stopped = explore([0], counter(50), {"below 3": lambda n: n < 3}, stop_on_violation=True)
    assert stopped.distinct_states < full.distinct_states and not stopped.complete
    assert stopped.counterexample("below 3") == full.counterexample("below 3")


def test_edges_are_three_parallel_arrays():
    run = explore([(IDLE, IDLE)], mutex(locked=True), record_edges=True)
    edges = list(zip(run.edge_src, run.edge_label, run.edge_dst))
    assert len(edges) == run.transitions == 14
    for src, label, dst in edges:
        assert (run.labels[label], run.states[dst]) in mutex(locked=True)(run.states[src])


def test_label_ids_and_decoding_give_the_same_exploration():
    labels = ["Inc", "Dec"]
    plain = explore([0], counter(7), {"below 5": lambda n: n < 5}, record_edges=True)

    def encoded_successors(code):  # states stored as strings, labels as ids
        return [(labels.index(label), str(n)) for label, n in counter(7)(int(code))]

    coded = explore(["0"], encoded_successors, {"below 5": lambda code: int(code) < 5},
                    record_edges=True, labels=labels, decode=int)
    assert coded.counterexample("below 5") == plain.counterexample("below 5")
    assert [coded.state(i) for i in range(coded.distinct_states)] == plain.states
    assert [coded.labels[i] for i in coded.edge_label] == [plain.labels[i] for i in plain.edge_label]


@pytest.mark.parametrize("fill_at", [None, 3])
def test_a_guarded_property_is_called_only_once_its_watch_fills(fill_at):
    watch, calls = [], []

    def successors(n):
        if n == fill_at:
            watch.append(n)  # the engine saw a failing component
        return counter(6)(n)

    def holds(n):
        calls.append(n)
        return n != 4

    run = explore([0], successors, {"not 4": Guarded(holds, watch)})
    if fill_at is None:
        assert calls == [] and run.violations == {}  # never called: holds by construction
    else:
        # called for the new states from the expansion that filled it (4; 2 was known),
        # and no longer once it is violated
        assert calls == [4]
        assert len(run.counterexample("not 4")) == 5


def test_the_fast_engine_refuses_a_runtime_action_that_reads_a_global_it_memoises_without(monkeypatch):
    """fast.py memoises a local runtime step on the initial globals; a step that also
    reads a global (here MaintStep waiting for `upper` to be back at its start) must
    fail loudly rather than be memoised wrongly."""
    from protocol.model import actions
    from protocol.model import next as model
    from protocol.configurations.named import lookup
    from protocol.run import explore_config
    from protocol.model.state import initial

    cfg = lookup("Holds").config
    declared, start = model.BY_NAME["MaintStep"], initial(cfg)
    sabotaged = attrs.evolve(declared, step=lambda s, **kw: declared.step(s, **kw) if s.upper == start.upper else None)
    monkeypatch.setattr(actions, "ACTIONS", tuple(sabotaged if a is declared else a for a in actions.ACTIONS))
    with pytest.raises(AssertionError, match=r"^MaintStep\(p\) reads the global upper outside its footprint: "
                                             "add .upper. to its footprint.s reads$"):
        explore_config(cfg)


def test_a_footprint_breach_is_one_line_naming_the_action_and_the_variable(monkeypatch, capsys):
    from protocol.model import actions
    from protocol.cli import main
    from protocol.configurations.named import lookup
    from protocol.model.state import initial

    declared, start = actions.by_name("MaintStep"), initial(lookup("Holds").config)
    sabotaged = attrs.evolve(declared, step=lambda s, **kw: declared.step(s, **kw) if s.upper == start.upper else None)
    monkeypatch.setattr(actions, "ACTIONS", tuple(sabotaged if a is declared else a for a in actions.ACTIONS))
    assert main(["check", "Holds"]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "MaintStep(p) reads the global upper outside its footprint" in line and "add 'upper'" in line
