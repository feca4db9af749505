"""Leads-to under weak fairness on the vector engine's graph, as array operations.
Knows nothing of the protocol.

The same decision as liveness.py (see its docstring for the semantics), on
the edges as integer arrays in compressed rows: the enabled fair families
per state by one `bitwise_or.reduceat`; the states on or after a cycle by
Kahn's peeling a frontier at a time; the strongly connected components of
what is left by `scipy.sparse.csgraph`; the stalled region grown a frontier
at a time; each component's fairness (a family disabled in one of its
states or taken by an edge inside it) by `bitwise_or` over its states and
edges. Where a pair fails, the lasso is liveness.py's own (`shortest_prefix`,
`lasso`), run on the same ids and edge order as the packed engine's graph,
so the verdicts and the lassos are the same.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from . import GLOBALS, PROCESS
from . import liveness
from .liveness import Counterexample


def rows(offsets: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edge indices out of `nodes` (in their order), and the node of each."""
    starts = offsets[nodes]
    counts = offsets[nodes + 1] - starts
    total = int(counts.sum())
    source = np.repeat(np.arange(len(nodes)), counts)
    index = np.arange(total) - (np.cumsum(counts) - counts)[source] + starts[source]
    return index, nodes[source]


class VectorGraph:
    """The reachable graph in compressed rows, with each state's enabled fair families
    (family i is bit 1 << i), as liveness.FairGraph but in numpy."""

    def __init__(self, offsets, labels, targets, families: Sequence, label_family: Sequence,
                 parts: dict | None = None):
        """`parts`, when given, accumulates the CPU seconds of each part of the decision."""
        self.parts = {} if parts is None else parts
        self.n = len(offsets) - 1
        self.offsets, self.labels, self.targets = offsets, labels, targets
        self.families = list(families)
        if len(self.families) > 64:
            raise ValueError("more than 64 fair families: the vector liveness packs them in one word")
        bit_of = {family: 1 << i for i, family in enumerate(self.families)}
        self.label_bit = [bit_of.get(family, 0) if family is not None else 0 for family in label_family]
        self.all_families = (1 << len(self.families)) - 1
        self.family_dtype = smallest_unsigned(len(self.families))
        self._rounds = None  # Kahn's peeling, round by round: a topological order where acyclic
        with self.timed("liveness:enabled"):
            self.enabled = self._enabled_masks()
        self._cyclic = None

    @contextmanager
    def timed(self, part: str):
        started = time.process_time()
        try:
            yield
        finally:
            self.parts[part] = self.parts.get(part, 0.0) + time.process_time() - started

    def _enabled_masks(self) -> np.ndarray:
        enabled = np.zeros(self.n, dtype=self.family_dtype)
        if not self.all_families or not len(self.targets):
            return enabled
        bits = np.array(self.label_bit, dtype=self.family_dtype)[self.labels]
        busy = np.flatnonzero(np.diff(self.offsets) > 0)
        enabled[busy] = np.bitwise_or.reduceat(bits, self.offsets[busy])
        return enabled

    def stutters(self) -> np.ndarray:
        """Per state, True when no fair family is enabled in it."""
        return (self.enabled & self.family_dtype(self.all_families)) == 0

    def cyclic(self) -> np.ndarray:
        """Per state, True when it lies in a strongly connected component with an edge inside."""
        if self._cyclic is None:
            with self.timed("liveness:cycles"):
                self._cyclic = self._find_cyclic()
        return self._cyclic

    def _find_cyclic(self) -> np.ndarray:
        cyclic = np.zeros(self.n, dtype=bool)
        rest = self.after_cycles()
        if rest.any():  # split only what peeling left: every cycle is in there
            component, nodes, inside = self.components_within(rest)
            sizes = np.bincount(component)
            cyclic[nodes] = sizes[component] > 1
            loops = inside[0][inside[0] == inside[1]]  # self-loops, as local indices
            cyclic[nodes[loops]] = True
        return cyclic

    def after_cycles(self) -> np.ndarray:
        """Per state, True when it lies on a cycle or after one: what Kahn's peeling leaves."""
        incoming = np.bincount(self.targets, minlength=self.n).astype(np.int64)
        ready = np.flatnonzero(incoming == 0)
        self._rounds = []
        while len(ready):
            self._rounds.append(ready)
            index, _ = rows(self.offsets, ready)
            hit, times = np.unique(self.targets[index], return_counts=True)  # measured faster than subtract.at
            incoming[hit] -= times
            ready = hit[incoming[hit] == 0]
        return incoming > 0

    def components_within(self, within: np.ndarray):
        """The strongly connected components of the states in `within` and the edges among
        them: (component per selected state, the selected states, the inner edges as
        (source, destination) local indices)."""
        nodes = np.flatnonzero(within)
        local = np.full(self.n, -1, dtype=np.int64)
        local[nodes] = np.arange(len(nodes))
        index, source = rows(self.offsets, nodes)
        target = self.targets[index]
        keep = within[target]
        src, dst = local[source[keep]], local[target[keep]]
        matrix = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(len(nodes), len(nodes)))
        _, component = connected_components(matrix, directed=True, connection="strong")
        return component, nodes, (src, dst, index[keep])

    def may_stay(self) -> np.ndarray:
        return self.stutters() | self.cyclic()

    # ------------------------------------------------------------ deciding

    def stalled_regions(self, pairs: dict) -> dict:
        """pair number -> its stalled region (`stalled_region`). On an acyclic graph all of
        them in one sweep in topological order (Kahn's rounds), a pair per bit: a state's
        bits are final once the round before it is done."""
        if len(pairs) <= 1 or self.cyclic().any():
            return {number: self.stalled_region(*masks) for number, masks in pairs.items()}
        numbers = list(pairs)
        dtype = smallest_unsigned(len(numbers))
        reached = np.zeros(self.n, dtype=dtype)
        unmet_bits = np.zeros(self.n, dtype=dtype)
        for bit, number in enumerate(numbers):
            triggers, unmet = pairs[number]
            reached[triggers] |= dtype(1 << bit)
            unmet_bits[unmet] |= dtype(1 << bit)
        for nodes in self._rounds:
            nodes = nodes[reached[nodes] != 0]
            if not len(nodes):
                continue
            index, source = rows(self.offsets, nodes)
            target = self.targets[index]
            passed = reached[source] & unmet_bits[target]
            for bit in range(len(numbers)):
                hit = target[(passed & dtype(1 << bit)) != 0]
                reached[hit] |= dtype(1 << bit)
        return {number: (reached & dtype(1 << bit)) != 0 for bit, number in enumerate(numbers)}

    def stalled_region(self, triggers: np.ndarray, unmet: np.ndarray) -> np.ndarray:
        """The states where the conclusion fails, reachable from a trigger without it holding."""
        region = triggers.copy()
        frontier = np.flatnonzero(triggers)
        while len(frontier):
            index, _ = rows(self.offsets, frontier)
            reached = self.targets[index]
            reached = np.unique(reached[unmet[reached] & ~region[reached]])
            region[reached] = True
            frontier = reached
        return region

    def fair_components(self, region: np.ndarray) -> "FairComponents":
        """As liveness.fair_components: the region's states from which a fair behaviour can
        stay in it forever."""
        cyclic = self.cyclic()
        mask = region & ~cyclic & self.stutters()
        component = np.full(self.n, -1, dtype=np.int64)
        inner = region & cyclic
        if inner.any():
            local, nodes, (src, dst, index) = self.components_within(inner)
            count = int(local.max()) + 1
            everything = self.family_dtype(self.all_families)
            satisfied = np.zeros(count, dtype=self.family_dtype)
            np.bitwise_or.at(satisfied, local, everything & ~self.enabled[nodes])
            same = local[src] == local[dst]
            bits = np.array(self.label_bit, dtype=self.family_dtype)[self.labels[index[same]]]
            np.bitwise_or.at(satisfied, local[src[same]], bits)
            fair = satisfied[local] == everything
            mask[nodes[fair]] = True
            component[nodes[fair]] = local[fair]
        return FairComponents(mask, component)

    def find_violation(self, initial: Sequence[int], pairs) -> Counterexample | None:
        """liveness.find_violation on this graph: the same verdict and lasso."""
        best = None
        live = [number for number, (triggers, _) in enumerate(pairs) if triggers.any()]
        if live:
            may_stay = self.may_stay()
            live = [number for number in live if (pairs[number][1] & may_stay).any()]
        with self.timed("liveness:region"):
            regions = self.stalled_regions({number: pairs[number] for number in live})
        for number in live:
            triggers, unmet = pairs[number]
            region = regions[number]
            with self.timed("liveness:fairness"):
                fair = self.fair_components(region)
            if not fair.mask.any():
                continue
            with self.timed("liveness:lasso"):
                prefix = liveness.shortest_prefix(self.walker(), initial, triggers.view(np.uint8),
                                                  region.view(np.uint8), fair)
            if best is None or len(prefix) < len(best[1]):
                best = (number, prefix, fair)
        if best is None:
            return None
        number, prefix, fair = best
        return Counterexample(number, liveness.lasso(self.walker(), prefix, fair.component_of(prefix[-1][1])))

    def walker(self) -> "ListGraph":
        """The graph as Python lists, for liveness.py's path searches (only where a pair fails)."""
        if getattr(self, "_walker", None) is None:
            self._walker = ListGraph(self)
        return self._walker


def smallest_unsigned(bits: int):
    """The narrowest unsigned numpy type holding `bits` bits."""
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        if bits <= 8 * np.dtype(dtype).itemsize:
            return dtype
    raise ValueError(f"{bits} bits do not fit one machine word")


class FairComponents:
    """liveness.FairComponents over arrays: `mask` per state, and the fair component of each
    state that lies in one with an edge inside (-1 elsewhere)."""

    def __init__(self, mask: np.ndarray, component: np.ndarray):
        self.mask, self.component = mask, component

    def component_of(self, v: int) -> frozenset:
        here = self.component[v]
        if here < 0:
            return frozenset((v,))
        return frozenset(np.flatnonzero(self.component == here).tolist())


class ListGraph:
    """What liveness.py's `shortest_prefix` and `lasso` read of a graph, as Python lists."""

    def __init__(self, graph: VectorGraph):
        self.n, self.families, self.label_bit = graph.n, graph.families, graph.label_bit
        self.all_families = graph.all_families
        self.offsets = graph.offsets.tolist()
        self.targets = graph.targets.tolist()
        self.labels = graph.labels.tolist()
        self.enabled = graph.enabled.tolist()

    def edges_from(self, v: int):
        start, end = self.offsets[v], self.offsets[v + 1]
        return zip(self.labels[start:end], self.targets[start:end])


def leads_to_masks(run, pairs) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per leads-to pair, (triggers, unmet) over the run's states as boolean arrays: per
    interned component where the pair reads only the globals (premise) and its
    process's locals (conclusion), else on every decoded state."""
    engine = run.engine
    columns = None
    masks = []
    for pair in pairs:
        if pair.premise_reads == GLOBALS and pair.conclusion_reads == PROCESS:
            if columns is None:
                columns = run.components()
            G, L = columns
            premise_of = np.array([bool(pair.premise(engine.assemble(g, [engine.empty_local] * engine.P)))
                                   for g in engine.globals], dtype=bool)
            unmet_of = np.array([not pair.conclusion(engine.assemble(engine.initial_globals, [loc] * engine.P))
                                 for loc in engine.locals], dtype=bool)
            unmet = unmet_of[L[pair.process]]
            masks.append((premise_of[G] & unmet, unmet))
            continue
        triggers, unmet = liveness.leads_to_masks(run.decoded_states(),
                                                  [(pair.premise, pair.conclusion)])[0]
        masks.append((np.frombuffer(bytes(triggers), dtype=bool).copy(),
                      np.frombuffer(bytes(unmet), dtype=bool).copy()))
    return masks
