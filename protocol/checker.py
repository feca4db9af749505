"""Breadth-first exploration of a transition system. Knows nothing of the protocol.

It takes initial states, a successor function `state -> [(label, state)]`,
named state invariants `state -> bool` and named transition properties
`(state, state) -> bool`. Every new state gets an integer id in discovery
order; parents and the label that led to each state are kept by id, so a
violation always comes with a shortest trace. Counting follows TLC:

- distinct states: reachable states;
- transitions: pairs (reachable state, enabled action instance);
- depth: states on the longest shortest path, the initial state counting 1.
"""

from __future__ import annotations

import time
from array import array
from typing import Callable, Hashable, Iterable, Mapping, NamedTuple, Sequence


class Violation(NamedTuple):
    """Where a property first fails in breadth-first order.

    For a state invariant, `state` is the id of the violating state and
    `label`/`after` are None. For a transition property, `state` is the id of
    the state before the step, `label` the step, `after` the state it led to.
    """

    prop: str
    state: int
    label: Hashable = None
    after: Hashable = None


class Progress(NamedTuple):
    distinct_states: int
    depth: int
    queue: int
    seconds: float


class Exploration:
    """The reachable graph as far as it was explored, and the first violations."""

    def __init__(self):
        self.states: list = []  # id -> state
        self.index: dict = {}  # state -> id
        self.parent = array("q")  # id -> parent id, -1 for an initial state
        self.via: list = []  # id -> label of the step from the parent, None for initial
        self.transitions = 0
        self.depth = 0
        self.complete = False
        self.interrupted = False
        self.seconds = 0.0
        self.violations: dict[str, Violation] = {}
        self.labels: list = []  # label id -> label (when edges are recorded)
        # The reachable graph's edges, when recorded: edge i goes from state
        # edge_src[i] to state edge_dst[i] by the action labels[edge_label[i]].
        self.edge_src = array("q")
        self.edge_label = array("q")
        self.edge_dst = array("q")
        self.edges_recorded = False
        self.expanded = 0  # states whose successors were all generated

    @property
    def distinct_states(self) -> int:
        return len(self.states)

    def path(self, state_id: int) -> list[tuple[Hashable, object]]:
        """The shortest path to `state_id`: [(label or None, state)], initial first."""
        steps = []
        while state_id >= 0:
            steps.append((self.via[state_id], self.states[state_id]))
            state_id = self.parent[state_id]
        steps.reverse()
        return steps

    def counterexample(self, prop: str) -> list[tuple[Hashable, object]] | None:
        """The shortest trace violating `prop`, or None when none was found."""
        found = self.violations.get(prop)
        if found is None:
            return None
        steps = self.path(found.state)
        if found.label is not None:
            steps.append((found.label, found.after))
        return steps


def explore(
    initial_states: Iterable,
    successors: Callable[[object], Sequence[tuple[Hashable, object]]],
    invariants: Mapping[str, Callable[[object], bool]] = {},
    transition_properties: Mapping[str, Callable[[object, object], bool]] = {},
    *,
    max_states: int | None = None,
    stop_on_violation: bool = False,
    record_edges: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    progress_every: int = 20_000,
) -> Exploration:
    """Explore every reachable state breadth-first, checking every property.

    Stops early on Ctrl-C (`interrupted`), past `max_states`, or at the first
    violation with `stop_on_violation`; `complete` says whether the whole
    reachable graph was explored.
    """
    run = Exploration()
    started = time.perf_counter()
    states, index, parent, via = run.states, run.index, run.parent, run.via
    invariant_items = list(invariants.items())
    transition_items = list(transition_properties.items())
    violations = run.violations
    label_ids: dict = {}
    run.edges_recorded = record_edges
    edge_src, edge_label, edge_dst = run.edge_src, run.edge_label, run.edge_dst
    limit = max_states if max_states is not None else float("inf")

    def admit(state, parent_id: int, label) -> int:
        state_id = len(states)
        index[state] = state_id
        states.append(state)
        parent.append(parent_id)
        via.append(label)
        for name, holds in invariant_items:
            if name not in violations and not holds(state):
                violations[name] = Violation(name, state_id)
        return state_id

    def stop_now() -> bool:
        if stop_on_violation and violations:
            return True
        return len(states) >= limit

    try:
        for state in initial_states:
            if state not in index:
                admit(state, -1, None)
        run.depth = 1 if states else 0
        level_end = len(states)  # ids below this are at depth run.depth
        next_report = progress_every
        cursor = 0
        cut = stop_now()
        while cursor < len(states) and not cut:
            if cursor == level_end:
                run.depth += 1
                level_end = len(states)
            state = states[cursor]
            for label, after in successors(state):
                run.transitions += 1
                for name, holds in transition_items:
                    if name not in violations and not holds(state, after):
                        violations[name] = Violation(name, cursor, label, after)
                after_id = index.get(after)
                if after_id is None:
                    if len(states) >= limit:
                        cut = True
                        break
                    after_id = admit(after, cursor, label)
                if record_edges:
                    label_id = label_ids.get(label)
                    if label_id is None:
                        label_id = label_ids[label] = len(run.labels)
                        run.labels.append(label)
                    edge_src.append(cursor)
                    edge_label.append(label_id)
                    edge_dst.append(after_id)
            else:
                cursor += 1
            if stop_now():
                cut = True
            if on_progress is not None and len(states) >= next_report:
                next_report += progress_every
                on_progress(Progress(len(states), run.depth, len(states) - cursor, time.perf_counter() - started))
        run.expanded = cursor
        run.complete = cursor >= len(states) and not cut
        if not run.complete and len(states) > level_end:
            run.depth += 1  # states discovered at the next level count toward the depth seen
    except KeyboardInterrupt:
        run.interrupted = True
        run.complete = False
    run.seconds = time.perf_counter() - started
    return run
