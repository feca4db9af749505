"""Leads-to under weak fairness, decided on an explored graph. Knows nothing of the protocol.

The graph is given as the checker records it: states numbered 0..n-1 and
three parallel integer arrays of edges (source, label id, destination).
Each label id belongs to at most one weakly fair *family* (an action
instance such as `Publish(1)`); a family is enabled in a state when the
state has an outgoing edge with one of its labels.

`P ~> Q` fails exactly when some fair behaviour reaches a state where P
holds and Q does not, and from there stays in states where Q does not hold
forever (TLA+ semantics: every state may stutter). Such a behaviour ends in
a strongly connected component of the "not Q" states reachable from a
P-and-not-Q state, and a component can hold it forever exactly when every
fair family is disabled in some state of it or taken by an edge inside it
(Emerson-Lei for weak fairness). A single state with no edge inside is the
stutter, fair exactly when no fair family is enabled in it.

Components are found once for the whole graph: Kahn's peeling first settles
every state not on or after a cycle (all of them in the protocol's graphs:
every frontier only rises, queues drain), then an iterative Tarjan on
integer arrays splits what is left; a leads-to pair only refines the
non-trivial components. A pair whose conclusion fails only in states that
can neither stutter nor cycle holds without computing its region. networkx
needs about 1.1 GB peak and 7.5 s to build and split the 595,210-state,
2.7M-edge graph of `Holds` at D=2; Tarjan on these arrays takes 0.8 s, the
whole process peaking at 220 MB with the search and its edges
(`python -m protocol bench --scc`).

On a graph reduced by symmetry (one state per orbit of process
permutations), `find_violation_reduced` follows each pair through the
permutation every edge applied; see its docstring for what it decides there.
"""

from __future__ import annotations

import operator
from array import array
from collections import Counter, deque
from itertools import accumulate, compress, islice
from typing import Callable, Hashable, Iterable, NamedTuple, Sequence


class Lasso(NamedTuple):
    """A fair behaviour that violates a leads-to: a prefix, then a cycle forever.

    `steps` lists the run, as (label id of the step into it, state id), the
    first with label None. The cycle is `steps[loop:]`: from the last state
    the step labelled `back` returns to `steps[loop]`; with `back` None the
    last state stutters forever (then `loop` is its index). A state appears
    twice only when the run must pass it twice: before the premise and again
    in the cycle, or when no cycle through the component that visits each
    state once is fair (two fair families taken on edges out of one state).
    `fairness` says, per fair family, why the cycle is fair to it:
    (family, "disabled", i) when it is disabled in `steps[i]`, or
    (family, "taken", i) when the step out of `steps[i]` (the back step for
    the last one) takes it.
    """

    steps: tuple
    loop: int
    back: int | None
    fairness: tuple

    @property
    def stutters(self) -> bool:
        return self.back is None

    @property
    def length(self) -> int:
        """Model-spec section 7's lasso length: each state of the prefix and of the cycle
        counted once (the state the cycle returns to is not repeated)."""
        return len({state for _, state in self.steps})


class Counterexample(NamedTuple):
    pair: int  # which of the leads-to pairs it violates
    lasso: Lasso


class FairGraph:
    """The reachable graph in compressed rows, with each state's enabled fair families.

    `families` are the fair families in the order the caller wants them
    reported; `label_family[l]` is label l's family or None when l is not
    fair. Family i is the bit 1 << i of the masks.
    """

    def __init__(
        self,
        n: int,
        edge_src: Sequence[int],
        edge_label: Sequence[int],
        edge_dst: Sequence[int],
        families: Sequence[Hashable],
        label_family: Sequence[Hashable | None],
        enabled: list[int] | None = None,
    ):
        """`enabled`, when given, is each state's enabled families as `_enabled_masks`
        would compute them (the partitions of a parallel search compute their own)."""
        self.n = n
        self.families = list(families)
        bit_of = {family: 1 << i for i, family in enumerate(self.families)}
        self.label_bit = [bit_of.get(family, 0) if family is not None else 0 for family in label_family]
        self.all_families = (1 << len(self.families)) - 1
        self.offsets, self.targets, self.labels = compressed_rows(n, edge_src, edge_label, edge_dst)
        self.enabled = self._enabled_masks() if enabled is None else enabled
        self._cyclic = None
        self._stutters = None

    def _enabled_masks(self) -> list[int]:
        enabled = [0] * self.n
        if not self.all_families:
            return enabled
        offsets, labels, label_bit = self.offsets, self.labels, self.label_bit
        for v in range(self.n):
            mask = 0
            for label in labels[offsets[v]:offsets[v + 1]]:
                mask |= label_bit[label]
            enabled[v] = mask
        return enabled

    def edges_from(self, v: int):
        """(label id, destination) of every edge out of `v`, in recorded order."""
        start, end = self.offsets[v], self.offsets[v + 1]
        return zip(self.labels[start:end], self.targets[start:end])

    def cyclic(self) -> bytearray:
        """Per state, 1 when it lies in a strongly connected component with an edge inside.

        Computed once: any component of a subgraph lies inside one of these.
        """
        if self._cyclic is None:
            cyclic = bytearray(self.n)
            rest = after_cycles(self.offsets, self.targets, self.n)
            if any(rest):  # split only what peeling left: every cycle is in there
                component, count = strongly_connected_components(self.offsets, self.targets, self.n, rest)
                sizes = array("q", bytes(8 * count))
                for c in compress(component, rest):
                    sizes[c] += 1
                for v in compress(range(self.n), rest):
                    if sizes[component[v]] > 1 or self._has_self_loop(v):
                        cyclic[v] = 1
            self._cyclic = cyclic
        return self._cyclic

    def stutters(self) -> bytearray:
        """Per state, 1 when no fair family is enabled in it: alone, it may stutter forever."""
        if self._stutters is None:
            everything = self.all_families
            self._stutters = bytearray(not mask & everything for mask in self.enabled)
        return self._stutters

    def may_stay(self) -> bytearray:
        """Per state, 1 when a fair behaviour might stay there forever: it stutters, or
        lies on a cycle."""
        return bytearray(map(operator.or_, self.stutters(), self.cyclic()))

    def _has_self_loop(self, v: int) -> bool:
        return v in self.targets[self.offsets[v]:self.offsets[v + 1]]


def compressed_rows(n, edge_src, edge_label, edge_dst) -> tuple[array, array, array]:
    """Offsets, destinations and labels of the edges grouped by source, keeping their order."""
    counted = Counter(edge_src)
    offsets = array("q", accumulate(map(counted.__getitem__, range(n)), initial=0))
    if all(map(operator.le, edge_src, islice(edge_src, 1, None))):
        return offsets, edge_dst, edge_label  # already grouped (BFS order): share, don't copy
    slot = array("q", offsets)
    targets, labels = array("q", bytes(8 * len(edge_dst))), array("q", bytes(8 * len(edge_dst)))
    for v, label, w in zip(edge_src, edge_label, edge_dst):
        targets[slot[v]], labels[slot[v]] = w, label
        slot[v] += 1
    return offsets, targets, labels


def after_cycles(offsets, targets, n: int) -> bytearray:
    """Per state, 1 when it lies on a cycle or is reachable from one (Kahn's peeling:
    what is left after repeatedly removing states with no edge in). A few times
    cheaper per edge than Tarjan, and on an acyclic graph it settles everything."""
    incoming = in_degrees(targets, n)
    ready = [v for v in range(n) if not incoming[v]]
    left = n - peel(offsets, targets, incoming, ready)
    return bytearray(map(bool, incoming)) if left else bytearray(n)


def in_degrees(targets, n: int) -> array:
    """Per state 0..n-1, how many of `targets` name it."""
    counted = Counter(targets)
    return array("q", map(counted.__getitem__, range(n)))


def peel(offsets, targets, incoming: array, ready: list, remote=()) -> int:
    """Kahn's peeling: remove the states in `ready` (no edge left into them), then every
    state that removing leaves with no edge in, lowering `incoming` as it goes; how
    many were removed.

    For one part of a partitioned graph, `remote` gives the rows of its edges into
    each other part, with an outbox: (offsets, targets, outbox). A removed state's
    edges there are appended to the outbox, for that part to lower its own counts."""
    removed = 0
    while ready:
        v = ready.pop()
        removed += 1
        for w in targets[offsets[v]:offsets[v + 1]]:
            incoming[w] -= 1
            if not incoming[w]:
                ready.append(w)
        for row_offsets, row_targets, outbox in remote:
            outbox.extend(row_targets[row_offsets[v]:row_offsets[v + 1]])
    return removed


def strongly_connected_components(offsets, targets, n: int, within: bytearray | None = None):
    """Iterative Tarjan: (component id per state, number of components).

    With `within`, only states v with within[v] and the edges between them
    count; other states get component -1.
    """
    index = array("q", [-1]) * n
    low = array("q", [0]) * n
    component = array("q", [-1]) * n
    on_stack = bytearray(n)
    stack: list[int] = []
    counter = count = 0
    for root in range(n):
        if index[root] != -1 or (within is not None and not within[root]):
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = 1
        work = [(root, offsets[root])]
        while work:
            v, i = work[-1]
            end = offsets[v + 1]
            while i < end:
                w = targets[i]
                i += 1
                if within is not None and not within[w]:
                    continue
                if index[w] == -1:  # descend into w, resume v at edge i afterwards
                    work[-1] = (v, i)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = 1
                    work.append((w, offsets[w]))
                    break
                if on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            else:
                work.pop()
                if low[v] == index[v]:  # v is the root of a component: pop it
                    while True:
                        w = stack.pop()
                        on_stack[w] = 0
                        component[w] = count
                        if w == v:
                            break
                    count += 1
                if work:
                    parent = work[-1][0]
                    if low[v] < low[parent]:
                        low[parent] = low[v]
    return component, count


def leads_to_masks(states: Iterable, pairs: Sequence[tuple[Callable, Callable]]) -> list[tuple[bytearray, bytearray]]:
    """Per (premise, conclusion) pair, two masks over the states in order: where the
    premise holds and the conclusion does not (`triggers`), and where the conclusion
    does not hold (`unmet`).

    Each state is visited once, so a store that decodes states decodes each
    once. (Batching the states through `map` measured no faster.)
    """
    masks = [(bytearray(), bytearray()) for _ in pairs]
    for s in states:
        for (premise, conclusion), (triggers, unmet) in zip(pairs, masks):
            if conclusion(s):
                triggers.append(0)
                unmet.append(0)
            else:
                triggers.append(1 if premise(s) else 0)
                unmet.append(1)
    return masks


def find_violation(
    graph: FairGraph,
    initial: Sequence[int],
    pairs: Sequence[tuple[bytearray, bytearray]],
) -> Counterexample | None:
    """The fair lasso with the shortest prefix violating any of the leads-to `pairs`.

    Each pair is given by its masks (see `leads_to_masks`). Ties go to the
    earlier pair; None when every pair holds.
    """
    best = None
    for number, (triggers, unmet) in enumerate(pairs):
        if not any(triggers) or not could_stall(graph, unmet):
            continue
        region = stalled_region(graph, triggers, unmet)
        fair = fair_components(graph, region)
        if not any(fair.mask):
            continue
        prefix = shortest_prefix(graph, initial, triggers, region, fair)
        if best is None or len(prefix) < len(best[1]):
            best = (number, prefix, fair)
    if best is None:
        return None
    number, prefix, fair = best
    return Counterexample(number, lasso(graph, prefix, fair.component_of(prefix[-1][1])))


def could_stall(graph: FairGraph, unmet: bytearray) -> bool:
    """Whether any state where the conclusion fails could hold a fair behaviour: one
    that stutters with nothing fair enabled, or one on a cycle. When none can, the
    pair holds whatever the region; this spares computing it."""
    return any(map(operator.and_, unmet, graph.may_stay()))


def stalled_region(graph: FairGraph, triggers: bytearray, unmet: bytearray) -> bytearray:
    """The states where the conclusion fails, reachable from a trigger without it holding."""
    region = bytearray(triggers)
    spread(graph.offsets, graph.targets, region, unmet, deque(compress(range(graph.n), triggers)))
    return region


def spread(offsets, targets, region: bytearray, unmet: bytearray, frontier: deque, remote=()) -> None:
    """Grow `region` from the states in `frontier` (already in it) along the edges into
    states where `unmet` holds, breadth-first. `remote` as for `peel`: the edges into
    other parts go to their outboxes, for those parts to grow their own regions."""
    while frontier:
        v = frontier.popleft()
        for w in targets[offsets[v]:offsets[v + 1]]:
            if unmet[w] and not region[w]:
                region[w] = 1
                frontier.append(w)
        for row_offsets, row_targets, outbox in remote:
            outbox.extend(row_targets[row_offsets[v]:row_offsets[v + 1]])


class FairComponents(NamedTuple):
    """The states of a region from which a fair behaviour can stay in the region forever."""

    mask: bytearray  # per state, 1 when it lies in such a component
    groups: dict  # state -> its component's states, for the components with an edge inside

    def component_of(self, v: int) -> frozenset:
        return self.groups.get(v) or frozenset((v,))


def fair_components(graph: FairGraph, region: bytearray) -> FairComponents:
    """The components of `region` a fair behaviour can stay in forever: a single state
    stutters when nothing fair is enabled in it; a component with an edge inside when
    every fair family is disabled in one of its states or taken inside it."""
    cyclic = graph.cyclic()
    everything, enabled = graph.all_families, graph.enabled
    mask = bytearray(graph.n)
    for v in compress(range(graph.n), region):
        if not cyclic[v] and not enabled[v] & everything:
            mask[v] = 1
    groups: dict[int, frozenset] = {}
    inner = bytearray(map(operator.and_, region, cyclic)) if any(cyclic) else bytearray()
    if any(inner):
        component, count = strongly_connected_components(graph.offsets, graph.targets, graph.n, inner)
        members: list[list[int]] = [[] for _ in range(count)]
        for v in range(graph.n):
            if component[v] >= 0:
                members[component[v]].append(v)
        for states in members:
            if satisfied_families(graph, states, component) == everything:
                group = frozenset(states)
                for v in states:
                    mask[v] = 1
                    groups[v] = group
    return FairComponents(mask, groups)


def satisfied_families(graph: FairGraph, states: list[int], component) -> int:
    """The fair families disabled in some of `states` or taken by an edge among them."""
    everything, mask = graph.all_families, 0
    here = component[states[0]]
    for v in states:
        mask |= everything & ~graph.enabled[v]
        for label, w in graph.edges_from(v):
            if component[w] == here:
                mask |= graph.label_bit[label]
    return mask


def shortest_prefix(graph: FairGraph, initial, triggers, region, fair) -> list[tuple[int | None, int]]:
    """A shortest path from an initial state to a fair component, through a trigger and
    then only through `region`: [(label id or None, state id)].

    Breadth-first over (state, phase): phase 0 anywhere, phase 1 once a trigger
    was passed and only inside the region. Edges are taken in recorded
    order, so the same graph always gives the same path.
    """
    is_trigger = triggers
    came_from: dict[int, tuple[int, int | None]] = {}  # node -> (previous node, label)
    queue: deque[int] = deque()

    def reach(v: int, phase: int, previous: int, label):
        nodes = [2 * v + phase]
        if phase == 0 and is_trigger[v]:
            nodes.append(2 * v + 1)  # passing a trigger costs no step
        for node in nodes:
            if node not in came_from:
                came_from[node] = (previous, label)
                queue.append(node)

    for v in initial:
        reach(v, 0, -1, None)
    while queue:
        node = queue.popleft()
        v, phase = divmod(node, 2)
        if phase == 1 and fair.mask[v]:
            return unwind(came_from, node)
        for label, w in graph.edges_from(v):
            if phase == 0 or region[w]:
                reach(w, phase, node, label)
    raise ValueError("no fair component is reachable: the region was not computed from this graph")


def unwind(came_from, node) -> list[tuple[int | None, int]]:
    path = []
    while node >= 0:
        previous, label = came_from[node]
        path.append((label, node // 2))
        node = previous
    path.reverse()
    return path


def lasso(graph: FairGraph, prefix, component: frozenset) -> Lasso:
    """Close `prefix` (ending in `component`) with a fair cycle inside the component.

    The stutter when no fair family is enabled where the prefix ends;
    otherwise a walk that visits, for each family not yet satisfied, a state
    that disables it (lowest id) or else takes an edge of it, and returns.
    """
    steps = list(prefix)
    loop = len(steps) - 1
    entry = steps[-1][1]
    everything = graph.all_families
    if not graph.enabled[entry] & everything:
        reasons = [(f, "disabled", loop) for f in graph.families]
        return Lasso(tuple(steps), loop, None, tuple(reasons))
    walk: list[tuple[int, int]] = []  # (label, state) steps of the cycle, the last back to entry
    for bit, family in enumerate(graph.families):
        if satisfied(graph, entry, walk) >> bit & 1:
            continue
        walk += waypoint_path(graph, walk[-1][1] if walk else entry, 1 << bit, component)
    walk += inside_path(graph, walk[-1][1] if walk else entry, {entry}, component)
    walk = without_needless_loops(graph, entry, walk)
    back = walk.pop()[0]
    steps += walk
    return Lasso(tuple(steps), loop, back, tuple(fairness_reasons(graph, steps, loop, back)))


def without_needless_loops(graph: FairGraph, entry: int, walk: list) -> list:
    """The closed walk from `entry` (its last step back to it) with every stretch between
    two visits of one state cut out while the rest stays fair: the waypoints are
    chosen one family at a time, so a later one may pass a state again, or make an
    earlier detour unnecessary. A state stays repeated only when fairness needs it."""
    while True:
        for cut in repeated_stretches(entry, walk):
            shorter = walk[:cut.start] + walk[cut.stop:]
            if shorter and satisfied(graph, entry, shorter) == graph.all_families:
                walk = shorter
                break
        else:
            return walk


def repeated_stretches(entry: int, walk: list):
    """Slices of `walk` whose steps leave a state and come back to it, longest first."""
    visits: dict[int, list[int]] = {entry: [0]}
    for position, (_, state) in enumerate(walk, start=1):
        visits.setdefault(state, []).append(position)
    stretches = [slice(i, j) for positions in visits.values()
                 for k, i in enumerate(positions) for j in positions[k + 1:]]
    return sorted(stretches, key=lambda cut: (cut.start - cut.stop, cut.start))


def satisfied(graph: FairGraph, entry: int, walk) -> int:
    mask = graph.all_families & ~graph.enabled[entry]
    for label, state in walk:
        mask |= graph.label_bit[label] | (graph.all_families & ~graph.enabled[state])
    return mask


def waypoint_path(graph: FairGraph, start: int, bit: int, component) -> list[tuple[int, int]]:
    """From `start`, a shortest walk inside the component to a state disabling the
    family `bit`, or else to one of its edges inside the component and through it."""
    disabling = {v for v in component if not graph.enabled[v] & bit}
    if disabling:
        return inside_path(graph, start, disabling, component)
    taking = {v: (label, w) for v in sorted(component, reverse=True)
              for label, w in graph.edges_from(v) if graph.label_bit[label] & bit and w in component}
    if not taking:
        raise ValueError("the component is not fair to this family")
    path = inside_path(graph, start, set(taking), component)
    return path + [taking[path[-1][1] if path else start]]


def inside_path(graph: FairGraph, start: int, goals: set, component) -> list[tuple[int, int]]:
    """A shortest path inside the component from `start` to a goal: [(label, state)], empty
    when `start` is one."""
    if start in goals:
        return []
    came_from = {start: None}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for label, w in graph.edges_from(v):
            if w in component and w not in came_from:
                came_from[w] = (v, label)
                if w in goals:
                    return unwind_inside(came_from, w)
                queue.append(w)
    raise ValueError("the goal is not reachable inside the component")


def unwind_inside(came_from, v) -> list[tuple[int, int]]:
    path = []
    while came_from[v] is not None:
        previous, label = came_from[v]
        path.append((label, v))
        v = previous
    path.reverse()
    return path


def fairness_reasons(graph: FairGraph, steps, loop: int, back: int):
    """Per fair family, the first place in the cycle that disables or takes it."""
    cycle = range(loop, len(steps))
    out_label = {i: steps[i + 1][0] for i in cycle if i + 1 < len(steps)}
    out_label[len(steps) - 1] = back
    for bit, family in enumerate(graph.families):
        mask = 1 << bit
        disabled = next((i for i in cycle if not graph.enabled[steps[i][1]] & mask), None)
        if disabled is not None:
            yield family, "disabled", disabled
        else:
            yield family, "taken", next(i for i in cycle if graph.label_bit[out_label[i]] & mask)


# ------------------------------------------------------- under symmetry reduction


class Symmetry(NamedTuple):
    """How the edges of a graph reduced by symmetry rename the leads-to pairs.

    The graph holds one representative per orbit of a group of permutations;
    an edge labelled l stands for a step whose successor was mapped to its
    representative by permutation `label_permutation[l]`, so pair j at the
    source is pair `pair_maps[k][j]` at the destination, k being that
    permutation. The initial states are their own representatives.
    """

    label_permutation: Sequence[int]
    pair_maps: Sequence[Sequence[int]]


class QuotientCycle(ValueError):
    """A stall of the reduced graph might go round a cycle: see `find_violation_reduced`."""


def find_violation_reduced(
    graph: FairGraph,
    initial: Sequence[int],
    pairs: Sequence[tuple[bytearray, bytearray]],
    symmetry: Symmetry,
) -> Counterexample | None:
    """`find_violation` on a graph reduced by symmetry (Emerson and Sistla): each pair
    is followed through the permutations the edges apply, on the product of
    representatives and pair indices, so the masks need only the representatives.

    A state where no fair family is enabled is so in its whole orbit: a stalled
    representative that stutters is a real counterexample, and its shortest
    prefix has the unreduced length (breadth-first levels are unions of orbits).
    A cycle is harder: going round it may rename the processes, so which fair
    family it starves could only be judged after unrolling it. A cycle where a
    stall might lie is therefore refused (QuotientCycle); the protocol's graphs
    have none. The counterexample's `pair` is the real run's (whose renaming
    starts as the identity); its labels are the graph's.
    """
    if not any(any(triggers) for triggers, _ in pairs):
        return None
    unmet_anywhere = bytearray(len(pairs[0][1]))
    for _, unmet in pairs:
        unmet_anywhere = bytearray(map(operator.or_, unmet_anywhere, unmet))
    if not could_stall(graph, unmet_anywhere):
        return None
    region = product_region(graph, pairs, symmetry)
    if any(map(operator.and_, region, graph.cyclic())):
        raise QuotientCycle("a stalled region of the reduced graph has a cycle")
    if not any(map(operator.and_, region, graph.stutters())):
        return None
    steps, pair = product_prefix(graph, initial, pairs, symmetry)
    loop = len(steps) - 1
    reasons = tuple((family, "disabled", loop) for family in graph.families)
    return Counterexample(first_pair(steps, pair, symmetry), Lasso(tuple(steps), loop, None, reasons))


def pair_map_per_label(symmetry: Symmetry) -> list:
    """Label id -> where its edges send each pair index."""
    return [symmetry.pair_maps[k] for k in symmetry.label_permutation]


def product_region(graph: FairGraph, pairs, symmetry: Symmetry) -> bytearray:
    """The representatives where some pair, followed through the permutations, is
    stalled: reachable from its trigger without its conclusion holding."""
    m, moved = len(pairs), pair_map_per_label(symmetry)
    unmet = [mask for _, mask in pairs]
    offsets, targets, labels = graph.offsets, graph.targets, graph.labels
    seen = bytearray(graph.n * m)
    frontier = deque()
    for j, (triggers, _) in enumerate(pairs):
        for v in compress(range(graph.n), triggers):
            seen[v * m + j] = 1
            frontier.append(v * m + j)
    while frontier:
        v, j = divmod(frontier.popleft(), m)
        for i in range(offsets[v], offsets[v + 1]):
            w, k = targets[i], moved[labels[i]][j]
            if unmet[k][w] and not seen[w * m + k]:
                seen[w * m + k] = 1
                frontier.append(w * m + k)
    region = bytearray(graph.n)
    for node in compress(range(graph.n * m), seen):
        region[node // m] = 1
    return region


def product_prefix(graph: FairGraph, initial, pairs, symmetry: Symmetry):
    """A shortest path from an initial state through a trigger of some pair to a
    stuttering state, the pair (followed through the permutations) failing from
    the trigger on: ([(label or None, state)], the pair at the end).

    As `shortest_prefix`, over (state, phase): phase 0 before the trigger, phase
    1 + j while following pair j. Only called when such a path exists.
    """
    width, moved, stutters = len(pairs) + 1, pair_map_per_label(symmetry), graph.stutters()
    unmet = [mask for _, mask in pairs]
    triggered: dict[int, list[int]] = {}  # state -> the pairs whose premise holds and conclusion fails there
    for j, (triggers, _) in enumerate(pairs):
        for v in compress(range(graph.n), triggers):
            triggered.setdefault(v, []).append(j)
    came_from: dict[int, tuple[int, int | None]] = {}
    queue: deque[int] = deque()

    def enter(v: int, previous: int, label) -> None:
        for node in (v * width, *(v * width + 1 + j for j in triggered.get(v, ()))):
            if node not in came_from:  # passing a trigger costs no step
                came_from[node] = (previous, label)
                queue.append(node)

    for v in initial:
        enter(v, -1, None)
    while queue:
        node = queue.popleft()
        v, phase = divmod(node, width)
        if phase and stutters[v]:
            return unwind_product(came_from, node, width), phase - 1
        for label, w in graph.edges_from(v):
            if not phase:
                enter(w, node, label)
                continue
            k = moved[label][phase - 1]
            after = w * width + 1 + k
            if unmet[k][w] and after not in came_from:
                came_from[after] = (node, label)
                queue.append(after)
    raise ValueError("no stall is reachable: the region was not computed from this graph")


def unwind_product(came_from, node, width: int) -> list[tuple[int | None, int]]:
    path = []
    while node >= 0:
        previous, label = came_from[node]
        path.append((label, node // width))
        node = previous
    path.reverse()
    return path


def first_pair(steps, pair: int, symmetry: Symmetry) -> int:
    """The pair at the first state that is `pair` at the last, undoing each step's
    permutation from the end."""
    inverse = [{k: j for j, k in enumerate(mapping)} for mapping in symmetry.pair_maps]
    for label, _ in reversed(steps[1:]):
        pair = inverse[symmetry.label_permutation[label]][pair]
    return pair
