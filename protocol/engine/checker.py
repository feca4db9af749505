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
from bisect import bisect_right
from operator import itemgetter
from typing import Callable, Hashable, Iterable, Mapping, NamedTuple, Sequence

from protocol.engine import Model
from protocol.engine.interface import Counts, Run, Unavailable, any_premise, decoded_masks
from protocol.engine.liveness import FairGraph


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


first = itemgetter(0)


def _identity(state):
    return state


class Progress(NamedTuple):
    distinct_states: int
    depth: int
    queue: int
    seconds: float


class Exploration(Run):
    """The reachable graph as far as it was explored, and the first violations
    (the `Run` of the sequential search, every state kept)."""

    def __init__(self, realize: Callable | None = None):
        """`realize`, with a reduction (symmetry): stored steps, which run through
        representatives -> a real path of the model [(label, state)]."""
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
        # With `weigh` (a reduction), what the stored states and their steps stand for.
        self.weight = 0  # the sum of `weigh` over the states admitted
        self.weighted_transitions = 0  # the sum of `weigh(state) * out-degree` over the steps taken
        self.weighed = False  # whether states were weighed (a reduction): then weights are the counts
        # Per breadth-first level, from depth 1: the ids below its end, and the weight below it.
        self.level_ends = array("q")
        self.level_weights = array("q")
        self.decode = _identity  # stored state -> the state the caller reasons with
        self.realize = realize

    @property
    def distinct_states(self) -> int:
        return len(self.states)

    def coverage(self, actions: Sequence | None = None) -> dict:
        """Per action (interface.Run.coverage): the labels of the steps that found each state
        first, and of the edges where they were kept."""
        from collections import Counter

        from protocol.engine.interface import coverage_by_action

        if self.weighed:
            raise Unavailable("under symmetry a state stands for its orbit: give --coverage without --symmetry")
        found = Counter(label for label in self.via if label is not None)
        labels = list(dict.fromkeys([*self.labels, *found]))
        taken = None
        if self.edges_recorded:
            per_id = Counter(self.edge_label)
            taken = [per_id.get(i, 0) if i < len(self.labels) else 0 for i in range(len(labels))]
        return coverage_by_action(labels, [found.get(label, 0) for label in labels], taken, actions)

    def state(self, state_id: int):
        """State `state_id`, decoded."""
        return self.decode(self.states[state_id])

    def path(self, state_id: int) -> list[tuple[Hashable, object]]:
        """The shortest path to `state_id`: [(label or None, decoded state)], initial first."""
        return self.readable(self.stored_path(state_id))

    def stored_path(self, state_id: int) -> list[tuple[Hashable, object]]:
        """The shortest path to `state_id` as stored: [(label or None, stored state)]."""
        steps = []
        while state_id >= 0:
            steps.append((self.via[state_id], self.states[state_id]))
            state_id = self.parent[state_id]
        steps.reverse()
        return steps

    def readable(self, stored_steps: list) -> list[tuple[Hashable, object]]:
        """Stored steps as the caller reasons with them: realised when the search was
        reduced (its stored path runs through representatives), else decoded."""
        if self.realize is not None:
            return self.realize(stored_steps)
        return [(label, self.decode(state)) for label, state in stored_steps]

    def counterexample(self, prop: str) -> list[tuple[Hashable, object]] | None:
        """The shortest trace violating `prop`, or None when none was found."""
        found = self.violations.get(prop)
        if found is None:
            return None
        steps = self.stored_path(found.state)
        if found.label is not None:
            steps.append((found.label, found.after))
        return self.readable(steps)

    # ------------------------------------------------------------ the Run interface

    def counts(self) -> Counts:
        ends, weights = list(self.level_ends), list(self.level_weights)
        sizes = [after - before for before, after in zip([0, *weights], weights)] if self.weighed \
            else [after - before for before, after in zip([0, *ends], ends)]
        if self.weighed:
            return Counts(self.weight, self.weighted_transitions, self.depth, self.distinct_states, tuple(sizes))
        return Counts(self.distinct_states, self.transitions, self.depth, None, tuple(sizes))

    def violated(self) -> list[str]:
        return list(self.violations)

    def depth_of(self, state_id: int) -> int:
        """The breadth-first level (from 1) of state `state_id`."""
        return bisect_right(self.level_ends, state_id) + 1

    def first_reached(self, predicates: dict) -> dict:
        found = dict.fromkeys(predicates)
        looking = dict(predicates)
        for state_id in range(self.distinct_states):
            if not looking:
                break
            state = self.state(state_id)
            for name in [name for name, holds in looking.items() if holds(state)]:
                found[name] = self.depth_of(state_id)
                del looking[name]
        return found

    @property
    def liveness_decidable(self) -> bool:
        return self.complete and self.edges_recorded

    def fair_graph(self, model: Model) -> FairGraph:
        family_of = {instance.label: instance.family for instance in model.instances}
        label_family = [family_of.get(label) for label in self.labels]
        return FairGraph(self.distinct_states, self.edge_src, self.edge_label, self.edge_dst,
                         model.fair_families, label_family)

    def initial_ids(self) -> list[int]:
        return [state_id for state_id, parent in enumerate(self.parent) if parent < 0]

    def decoded_states(self):
        return (self.state(state_id) for state_id in range(self.distinct_states))

    def pair_masks(self, name: str, pairs) -> list:
        return decoded_masks(self.decoded_states(), pairs)

    def premises_reached(self, name: str, pairs, masks) -> tuple:
        return any_premise(self.decoded_states(), pairs, masks)

    def lasso_steps(self, lasso) -> tuple[list, Hashable | None]:
        steps = [(None if label is None else self.labels[label], self.state(state_id))
                 for label, state_id in lasso.steps]
        return steps, None if lasso.back is None else self.labels[lasso.back]


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
    labels: Sequence | None = None,
    decode: Callable[[object], object] | None = None,
    weigh: Callable[[object], int] | None = None,
    run: Exploration | None = None,
    step_target: Callable[[Hashable, object], object] | None = None,
) -> Exploration:
    """Explore every reachable state breadth-first, checking every property.

    Stops early on Ctrl-C (`interrupted`), past `max_states`, or at the first
    violation with `stop_on_violation`; `complete` says whether the whole
    reachable graph was explored.

    Two options let a successor engine keep its own compact encoding:
    with `labels`, `successors` yields (label id, state) with ids into
    `labels`, which spares hashing a label per edge; with `decode`, states
    are stored encoded and `path`/`counterexample`/`state` decode them.
    With `weigh`, each stored state stands for `weigh(state)` states (one per
    orbit of a reduction): `run.weight` and `run.weighted_transitions` count
    what they stand for, and `max_states` bounds `run.weight`. `run`, when
    given, is the empty `Exploration` (of a subclass) to fill. With
    `step_target`, a transition property reads `step_target(label, after)` as the
    state a step reached (a reduction stores the representative of the state
    reached, and a step's label says how to undo the renaming of its processes).
    """
    run = run if run is not None else Exploration()
    if decode is not None:
        run.decode = decode
    run.edges_recorded = record_edges
    label_of = LabelIds(run, labels)
    checks = Checks(invariants, transition_properties, run.violations, step_target)
    return timed(run, _search, StateTable(run, label_of.label), checks, successors, initial_states,
                 max_states, stop_on_violation, record_edges, on_progress, progress_every,
                 label_of.label, None if labels is not None else label_of.id, weigh)


def timed(run, search, *arguments):
    """`search(run, *arguments)`, timed into `run.seconds`; Ctrl-C leaves it incomplete."""
    started = time.perf_counter()
    try:
        search(run, *arguments)
    except KeyboardInterrupt:
        run.interrupted = True
        run.complete = False
    run.seconds = time.perf_counter() - started
    return run


class StateTable:
    """The seen store of `explore`: every state kept, in id order, with a dict state -> id.

    What `_search` asks of a seen store: `lookup(state)` gives the id of a state
    already seen or None; `add(state, parent id, label, position)` admits a new
    one under the next id, `add_initial(state, number)` an initial one;
    `head(cursor)` is the state with id `cursor`, the next to expand (ids are
    expanded in order, each once).
    """

    def __init__(self, run: Exploration, to_label: Callable):
        states, index, states_append = run.states, run.index, run.states.append
        parent_append, via_append = run.parent.append, run.via.append
        self.lookup = index.get
        self.head = states.__getitem__

        def add(state, parent_id: int, label, position: int) -> None:
            index[state] = len(states)
            states_append(state)
            parent_append(parent_id)
            via_append(to_label(label))

        def add_initial(state, number: int) -> None:
            index[state] = len(states)
            states_append(state)
            parent_append(-1)
            via_append(None)

        self.add, self.add_initial = add, add_initial


def _search(run, store, checks, successors, initial_states, max_states, stop_on_violation,
            record_edges, on_progress, progress_every, to_label, to_id=None, weigh=None):
    """The breadth-first loop, over any seen store (`StateTable`, `FingerprintTable`).
    The hot path is the inner `for`: one lookup per transition and one `add` per new
    state, everything else hoisted.

    With `weigh`, each stored state stands for `weigh(state)` states (a reduction's
    orbit): `run.weight` and `run.weighted_transitions` count those, and `max_states`
    bounds the weight, never admitting a state that would take it past the bound."""
    started = time.perf_counter()
    lookup, add, head = store.lookup, store.add, store.head
    violations = run.violations
    watches, step_target = checks.watches, checks.step_target
    edge_src, edge_label, edge_dst = run.edge_src, run.edge_label, run.edge_dst
    limit = max_states if max_states is not None else float("inf")

    count = weight = weighted_transitions = 0
    for number, state in enumerate(initial_states):
        if lookup(state) is None:
            store.add_initial(state, number)
            checks.wake()
            checks.check_state(state, count)
            count += 1
            weight += 1 if weigh is None else weigh(state)
    run.depth = 1 if count else 0
    run.weighed = weigh is not None
    level_end = count  # ids below this are at depth run.depth
    if count:
        run.level_ends.append(count)
        run.level_weights.append(weight)
    next_report = progress_every
    cursor = 0
    cut = (stop_on_violation and bool(violations)) or weight >= limit
    transitions = 0
    known_violations = len(violations)
    interrupted = False
    try:
        while cursor < count and not cut:
            if cursor == level_end:
                run.depth += 1
                level_end = count
                run.level_ends.append(count)
                run.level_weights.append(weight)
            state_id, state, targets = cursor, head(cursor), []
            found = successors(state)
            transitions += len(found)
            if weigh is not None:
                state_weight = weigh(state)
                weighted_transitions += state_weight * len(found)
            if watches and any(watches):
                checks.wake()  # the successor engine has just seen a failing component
            state_checks, step_checks = checks.on_states, checks.on_steps
            for position, (label, after) in enumerate(found):
                if step_checks:
                    reached = after if step_target is None else step_target(label, after)
                    for name, holds in step_checks:
                        if name not in violations and not holds(state, reached):
                            violations[name] = Violation(name, cursor, to_label(label), after)
                after_id = lookup(after)
                if after_id is None:
                    after_id = count
                    if weigh is None:
                        over = after_id >= limit
                    else:
                        after_weight = weigh(after)
                        over = weight + after_weight > limit
                    if over:
                        transitions -= len(found) - 1 - position
                        if weigh is not None:
                            weighted_transitions -= state_weight * (len(found) - 1 - position)
                        cut = True
                        break
                    add(after, cursor, label, position)
                    count += 1
                    if weigh is not None:
                        weight += after_weight
                    if state_checks:
                        for name, holds in state_checks:
                            if name not in violations and not holds(after):
                                violations[name] = Violation(name, after_id)
                if record_edges:
                    targets.append(after_id)
            else:
                cursor += 1
            if record_edges:  # in bulk, once per state: cheaper than three appends per edge
                edge_src.extend([state_id] * len(targets))
                taken = found if len(targets) == len(found) else found[:len(targets)]
                edge_label.extend(map(first, taken) if to_id is None else [to_id(label) for label, _ in taken])
                edge_dst.extend(targets)
            if len(violations) != known_violations:
                known_violations = len(violations)
                checks.retire_violated()
                if stop_on_violation:
                    cut = True
            if (count if weigh is None else weight) >= limit:
                cut = True
            if on_progress is not None and count >= next_report:
                next_report += progress_every
                on_progress(Progress(count, run.depth, count - cursor, time.perf_counter() - started))
    except KeyboardInterrupt:  # keep the counts of what was explored, then report the interrupt
        interrupted = True
    run.transitions = transitions
    run.weight, run.weighted_transitions = (count, transitions) if weigh is None else (weight, weighted_transitions)
    run.expanded = cursor
    run.complete = cursor >= count and not cut
    if not run.complete and count > level_end:
        run.depth += 1  # states discovered at the next level count toward the depth seen
        run.level_ends.append(count)
        run.level_weights.append(weight)
    if interrupted:
        raise KeyboardInterrupt


class Guarded(NamedTuple):
    """A property a successor engine checks per component, with a cheap guard.

    `watch` is a collection the engine fills when some component fails the
    property (and never empties). While it is empty the property holds of
    every state and step by construction, and the checker does not call
    `holds`; from then on it calls `holds` on every state (or step).
    """

    holds: Callable
    watch: object


class Checks:
    """Which properties are checked on each new state and each step, right now."""

    def __init__(self, invariants: Mapping, transition_properties: Mapping, violations: dict,
                 step_target: Callable | None = None):
        self.violations, self.step_target = violations, step_target  # step_target: as `explore`'s
        self.on_states: list = []
        self.on_steps: list = []
        self.dormant: list = []  # (list to join, name, Guarded) whose watch is still empty
        for target, props in ((self.on_states, invariants), (self.on_steps, transition_properties)):
            for name, prop in props.items():
                if isinstance(prop, Guarded):
                    self.dormant.append((target, name, prop))
                else:
                    target.append((name, prop))
        self.watches = [prop.watch for _, _, prop in self.dormant]  # checked once per state

    def wake(self) -> None:
        """Start checking the guarded properties whose watch filled."""
        still = []
        for target, name, prop in self.dormant:
            if prop.watch:
                target.append((name, prop.holds))
            else:
                still.append((target, name, prop))
        self.dormant[:] = still
        self.watches[:] = [prop.watch for _, _, prop in still]

    def check_state(self, state, state_id: int) -> None:
        for name, holds in self.on_states:
            if name not in self.violations and not holds(state):
                self.violations[name] = Violation(name, state_id)

    def retire_violated(self) -> None:
        """Stop checking what already has its first (shortest) violation."""
        for checks in (self.on_states, self.on_steps):
            if any(name in self.violations for name, _ in checks):
                checks[:] = [(name, holds) for name, holds in checks if name not in self.violations]
        if any(name in self.violations for _, name, _ in self.dormant):
            self.dormant[:] = [item for item in self.dormant if item[1] not in self.violations]
            self.watches[:] = [prop.watch for _, _, prop in self.dormant]


class LabelIds:
    """Labels and their integer ids for the edge arrays: given up front, or numbered as met."""

    def __init__(self, run: Exploration, labels: Sequence | None):
        self.run = run
        if labels is not None:
            run.labels = list(labels)
            self.label = run.labels.__getitem__  # successors already yield ids
        else:
            self.ids: dict = {}
            self.label = lambda label: label

    def id(self, label) -> int:
        found = self.ids.get(label)
        if found is None:
            found = self.ids[label] = len(self.run.labels)
            self.run.labels.append(label)
        return found


# ------------------------------------------------------------ fingerprints


class FingerprintedExploration(Exploration):
    """An exploration that kept 64-bit fingerprints instead of states (TLC's way).

    Only the parent of each state and the position of the step into it among
    its parent's successors are kept, in integer arrays; a state is recovered
    by replaying those steps from its initial state through the successor
    function, which is deterministic, so paths and counterexamples are the very
    ones `explore` gives. Positions rather than labels: two steps of a state
    may share a label, never a position. No edges are recorded.
    """

    def __init__(self, realize: Callable | None = None):
        super().__init__(realize)
        self.states = self.index = self.via = None  # not kept: that is the point
        self.initial: list = []  # initial state number -> state (the few replays start from)
        self.step = array("H")  # id -> position of its step in successors(parent); initial number
        self.parent = array("i")
        self.count = 0
        self.generated = 0  # states generated: transitions plus initial states (TLC's count)
        self.seen = None  # the FingerprintSet
        self.replay_successors = None
        self.to_label = None

    @property
    def distinct_states(self) -> int:
        return self.count

    def state(self, state_id: int):
        return self.decode(self.stored_path(state_id)[-1][1])

    def stored_path(self, state_id: int) -> list[tuple[Hashable, object]]:
        """The shortest path to `state_id`, replayed from its initial state."""
        positions = []
        while self.parent[state_id] >= 0:
            positions.append(self.step[state_id])
            state_id = self.parent[state_id]
        state = self.initial[self.step[state_id]]
        steps = [(None, state)]
        for position in reversed(positions):
            label, state = self.replay_successors(state)[position]
            steps.append((self.to_label(label), state))
        return steps

    def first_reached(self, predicates: dict) -> dict:
        raise Unavailable("--fingerprints keeps no states to look for them in")

    def coverage(self, actions: Sequence | None = None) -> dict:
        raise Unavailable("--fingerprints keeps a fingerprint per state, not how it was found: give --coverage "
                          "without --fingerprints")

    def report(self) -> dict:
        return {"fingerprint_collision": self.collision_probability()}

    def collision_probability(self) -> dict:
        """TLC's two estimates of the chance that two distinct states shared a fingerprint."""
        from protocol.engine.fingerprints import actual_collision_probability, optimistic_collision_probability

        return {
            "optimistic": optimistic_collision_probability(self.count, self.generated),
            "actual": actual_collision_probability(self.seen),
        }


def explore_fingerprinted(
    initial_states: Iterable,
    successors: Callable[[object], Sequence[tuple[Hashable, object]]],
    invariants: Mapping[str, Callable[[object], bool]] = {},
    transition_properties: Mapping[str, Callable[[object, object], bool]] = {},
    *,
    fingerprint: Callable[[object], int],
    max_states: int | None = None,
    stop_on_violation: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    progress_every: int = 20_000,
    labels: Sequence | None = None,
    decode: Callable[[object], object] | None = None,
    replay_successors: Callable | None = None,
    weigh: Callable[[object], int] | None = None,
    seen=None,
    record_edges: bool = False,
    realize: Callable | None = None,
    step_target: Callable | None = None,
) -> FingerprintedExploration:
    """`explore`, storing a 64-bit `fingerprint(state)` per state seen instead of the state.

    The same states in the same order, the same counts, depth, violations and
    counterexamples as `explore`, unless two distinct states share a
    fingerprint (see `collision_probability`). Full states are kept only for
    the queue, the rest of the current breadth-first level and the next.
    `replay_successors` (default `successors`) rebuilds paths: give it when
    `successors` has side effects such as counting. `seen` is the table of
    fingerprints (default: a fresh `fingerprints.FingerprintSet`). With `weigh`,
    `run.weight` is the sum of `weigh(state)` over the states admitted (a
    reduction's orbit sizes: the states themselves are not kept to sum later).
    `realize` as for `Exploration`, `step_target` as for `explore`.
    """
    if record_edges:
        raise ValueError("a fingerprinted search keeps no edges: explore() records them")
    from protocol.engine.fingerprints import FingerprintSet

    run = FingerprintedExploration(realize)
    if decode is not None:
        run.decode = decode
    run.seen = seen if seen is not None else FingerprintSet()
    run.replay_successors = replay_successors or successors
    run.to_label = LabelIds(run, labels).label
    checks = Checks(invariants, transition_properties, run.violations, step_target)
    timed(run, _search, FingerprintTable(run, fingerprint), checks, successors, initial_states,
          max_states, stop_on_violation, False, on_progress, progress_every, run.to_label, None, weigh)
    run.generated = len(run.initial) + run.transitions
    return run


class FingerprintTable:
    """The seen store of `explore_fingerprinted`: a fingerprint table for the index,
    and a queue for the states not yet expanded (its head has id `cursor`)."""

    def __init__(self, run: FingerprintedExploration, fingerprint: Callable):
        from collections import deque

        queue = deque()
        admit = run.seen.add
        self.lookup = lambda state: None if admit(fingerprint(state)) else KNOWN  # admits it: `add` follows
        self.head = lambda cursor: queue.popleft()

        def add(state, parent_id: int, label, position: int) -> None:
            run.count += 1
            queue.append(state)
            try:
                run.step.append(position)
            except OverflowError:  # a state with more than 65,535 successors: widen
                run.step = array("q", run.step)
                run.step.append(position)
            run.parent.append(parent_id)

        def add_initial(state, number: int) -> None:
            add(state, -1, None, len(run.initial))
            run.initial.append(state)

        self.add, self.add_initial = add, add_initial


KNOWN = -1  # what a fingerprint table's lookup says of a state seen: it keeps no ids
