"""Leads-to under weak fairness on the vector engine's graph, as array operations.
Knows nothing of the protocol.

The same decision as liveness.py (see its docstring for the semantics), on
the edges as integer arrays in compressed rows: the enabled fair families
per state by one `bitwise_or.reduceat`; the states on or after a cycle by
Kahn's peeling a frontier at a time; the strongly connected components of
what is left by `scipy.sparse.csgraph`; the stalled region grown a frontier
at a time; each component's fairness (a family disabled in one of its
states or taken by an edge inside it) by `bitwise_or` over its states and
edges. Where a pair fails, the prefix is liveness.py's `shortest_prefix` a level
at a time (`VectorGraph.shortest_prefix`, the same path) and the cycle closing it
liveness.py's own `lasso`, run on the same ids and edge order as the packed engine's
graph, so the verdicts and the lassos are the same.
"""

from __future__ import annotations

import gc
import threading
import time
from contextlib import contextmanager
from typing import Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from protocol.engine import GLOBALS, PAIR, PROCESS
from protocol.engine import liveness
from protocol.engine.liveness import Counterexample, Lasso, QuotientCycle

# A frontier is expanded this many states at a time: its edges in flight take a few
# tens of bytes each, so this bounds the memory of one step to a few hundred MB.
CHUNK = 1 << 21
# With threads, a frontier of at least this many states is cut in a part per thread.
SHARED_AT_LEAST = 1 << 14
# Up to this many leads-to pairs, an acyclic product region is swept with the pairs as
# bits (a table of 2**pairs masks per label); beyond, searched over (state, pair).
SWEPT_PAIRS = 12


def rows(offsets: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edge indices out of `nodes` (in their order), and the node of each."""
    index, counts = edge_index(offsets, nodes)
    return index, np.repeat(nodes, counts)


def edge_rows(offsets: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edge indices out of `nodes` (in their order), and the position in `nodes` of each's source."""
    index, counts = edge_index(offsets, nodes)
    return index, np.repeat(np.arange(len(nodes)), counts)


def edge_index(offsets: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edge indices out of `nodes` (in their order), and how many leave each: what
    a value per node needs to be spread over its edges (`np.repeat(values, counts)`),
    cheaper than gathering it through each edge's source."""
    starts = offsets[nodes]
    counts = offsets[nodes + 1] - starts
    index = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    index += np.arange(len(index))
    return index, counts


def chunks(nodes: np.ndarray, size: int = CHUNK):
    """`nodes` in consecutive pieces of at most `size`, which bounds the edges in flight."""
    for start in range(0, len(nodes), size):
        yield nodes[start:start + size]


def in_degrees(targets: np.ndarray, n: int, dtype) -> np.ndarray:
    """Per state, the edges into it, counted in place by `np.add.at` (the counts' and
    the one's dtypes matched: numpy's fast path). `np.bincount` would take the targets
    as 64-bit integers, a copy twice the size of a large graph's int32 ones (8 GB at
    P=3, D=2, MaxTime=3 under symmetry); `add.at` is given a slice of about n at a time
    all the same, so that no conversion of the whole is ever made."""
    incoming = np.zeros(n, dtype=dtype)
    one = incoming.dtype.type(1)
    step = max(n, CHUNK)
    for start in range(0, len(targets), step):
        np.add.at(incoming, targets[start:start + step], one)
    return incoming


class VectorGraph:
    """The reachable graph in compressed rows, with each state's enabled fair families
    (family i is bit 1 << i), as liveness.FairGraph but in numpy."""

    def __init__(self, offsets, labels, targets, families: Sequence, label_family: Sequence,
                 parts: dict | None = None, share=None, cycles_beside: bool = False):
        """`parts`, when given, accumulates the CPU seconds of each part of the decision;
        `share` (threads.Share), when given, shares the frontiers' parts among threads;
        `cycles_beside` starts finding the cycles in a thread of its own at once
        (`find_cycles_beside`), before the enabled families are gathered, which the
        cycles do not need."""
        self.parts = {} if parts is None else parts
        self.share = share
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
        self._cyclic = self._stutters = None
        self._beside = None  # (the thread finding the cycles, its answer)
        self.cycles_beside_seconds = 0.0
        self._lock = threading.Lock()  # the cycles and the walker found once, whatever thread asks first
        if cycles_beside:
            self.find_cycles_beside()
        with self.timed("liveness:enabled"):
            self.enabled = self._enabled_masks()

    @contextmanager
    def timed(self, part: str):
        started = time.thread_time()  # this thread's: with workers, properties are decided side by side
        try:
            yield
        finally:
            self.parts[part] = self.parts.get(part, 0.0) + time.thread_time() - started

    def _enabled_masks(self) -> np.ndarray:
        enabled = np.zeros(self.n, dtype=self.family_dtype)
        if not self.all_families or not len(self.targets):
            return enabled
        label_bits = np.array(self.label_bit, dtype=self.family_dtype)

        def chunk(start: int) -> None:  # a chunk of states at a time: the edges' bits in flight
            stop = min(start + CHUNK, self.n)
            offsets = self.offsets[start:stop + 1]
            bits = label_bits[self.labels[offsets[0]:offsets[-1]]]
            busy = np.flatnonzero(np.diff(offsets) > 0)
            enabled[start + busy] = np.bitwise_or.reduceat(bits, offsets[busy] - offsets[0])

        starts = list(range(0, self.n, CHUNK))
        width = 1 if self.share is None else self.share.workers  # as many chunks in flight as threads
        for first in range(0, len(starts), width):
            self.mapped(chunk, starts[first:first + width])
        return enabled

    def stutters(self) -> np.ndarray:
        """Per state, True when no fair family is enabled in it."""
        if self._stutters is None:
            self._stutters = (self.enabled & self.family_dtype(self.all_families)) == 0
        return self._stutters

    def cyclic(self) -> np.ndarray:
        """Per state, True when it lies in a strongly connected component with an edge inside."""
        with self._lock:
            if self._cyclic is None and self._beside is not None:
                self._cyclic = self._cycles_found_beside()
            if self._cyclic is None:
                with self.timed("liveness:cycles"):
                    self._cyclic = self._find_cyclic()
        return self._cyclic

    def find_cycles_beside(self) -> None:
        """Start finding the states on cycles (`cyclic`) in a thread of its own, while this
        one goes on with what needs no cycles (the leads-to masks, in Python): the peeling's
        gathers let go of the interpreter's lock (its `subtract.at` does not). Once `cyclic`
        has waited for it,
        `cycles_beside_seconds` holds the CPU seconds that thread spent."""
        answer: dict = {}

        def find() -> None:
            started = time.thread_time()
            try:
                answer["cyclic"] = self._find_cyclic()
            except BaseException as error:  # raised where `cyclic` waits for it
                answer["error"] = error
            finally:
                answer["seconds"] = time.thread_time() - started

        # a daemon: a Ctrl-C in this thread does not wait for it to finish
        thread = threading.Thread(target=find, name="vector-cycles", daemon=True)
        self._beside = (thread, answer)
        thread.start()

    @property
    def finding_cycles(self) -> bool:
        """Whether a thread is finding the cycles beside (`find_cycles_beside`), not yet waited for."""
        return self._beside is not None

    def _cycles_found_beside(self) -> np.ndarray:
        thread, answer = self._beside
        thread.join()
        self._beside = None
        self.parts["liveness:cycles"] = self.parts.get("liveness:cycles", 0.0) + answer["seconds"]
        self.cycles_beside_seconds = answer["seconds"]
        if "error" in answer:
            raise answer["error"]
        return answer["cyclic"]

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
        """Per state, True when it lies on a cycle or after one: what Kahn's peeling leaves.
        A round's edges are gathered a part per thread and taken off the in-degrees by
        `np.subtract.at` (its fast loop); a state peeled is marked -1, so the next round is
        the states at 0, found by a scan of the ids its edges hit (ascending, each once)."""
        ids = np.int32 if self.n < 2**31 else np.int64  # the rounds are kept: as narrow as they fit
        incoming = in_degrees(self.targets, self.n, ids)
        ready = np.flatnonzero(incoming == 0).astype(ids)
        one, self._rounds = ids(1), []

        def hits(part: np.ndarray) -> np.ndarray:
            index, _ = edge_index(self.offsets, part)
            return self.targets[index]

        while len(ready):
            self._rounds.append(ready)
            incoming[ready] = -1
            low, high = self.n, -1
            parts = list(chunks(ready, self.part_size(len(ready))))
            width = 1 if self.share is None else self.share.workers
            for first in range(0, len(parts), width):
                for hit in self.mapped(hits, parts[first:first + width]):
                    np.subtract.at(incoming, hit, one)  # one thread: no two write one count
                    if len(hit):
                        low, high = min(low, int(hit.min())), max(high, int(hit.max()))
            ready = (low + np.flatnonzero(incoming[low:high + 1] == 0)).astype(ids)
        return incoming > 0

    def part_size(self, size: int) -> int:
        """The states of a frontier of `size` taken at a time: CHUNK, or with threads, few
        enough that each has a part (past SHARED_AT_LEAST states)."""
        if self.share is None or size < SHARED_AT_LEAST:
            return CHUNK
        return min(CHUNK, -(-size // self.share.workers))

    def mapped(self, job, items: list) -> list:
        return [job(item) for item in items] if self.share is None or len(items) < 2 else self.share.map(job, items)

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
        unmet_bits = pair_bits([pairs[number][1] for number in numbers], dtype)
        # one array of bits per thread, each or'ed into by its own part of a round (no two
        # threads write one array): a state's bits are what all of them hold
        reached = [pair_bits([pairs[number][0] for number in numbers], dtype)]
        reached += [np.zeros(self.n, dtype=dtype) for _ in range(1, 1 if self.share is None else self.share.workers)]

        def spread(k: int, nodes: np.ndarray, bits: np.ndarray) -> None:
            index, counts = edge_index(self.offsets, nodes)
            target = self.targets[index]
            reaching = np.repeat(bits, counts)
            reaching &= unmet_bits[target]
            or_at(reached[k], target, reaching)

        for nodes in self._rounds:
            bits = reached[0][nodes]
            for other in reached[1:]:
                bits |= other[nodes]
            live = np.flatnonzero(bits)
            if not len(live):
                continue
            width = len(reached) if len(live) >= SHARED_AT_LEAST else 1
            parts = list(zip(np.array_split(nodes[live], width), np.array_split(bits[live], width)))
            self.mapped(lambda k: spread(k, *parts[k]), list(range(width)))
        for other in reached[1:]:
            reached[0] |= other
        return {number: (reached[0] & dtype(1 << bit)) != 0 for bit, number in enumerate(numbers)}

    def stalled_region(self, triggers: np.ndarray, unmet: np.ndarray) -> np.ndarray:
        """The states where the conclusion fails, reachable from a trigger without it holding."""
        region = triggers.copy()
        frontier = np.flatnonzero(triggers)
        while len(frontier):
            index, _ = rows(self.offsets, frontier)
            reached = self.targets[index]
            reached = sorted_unique(reached[unmet[reached] & ~region[reached]])
            region[reached] = True
            frontier = reached
        return region

    def fair_components(self, region: np.ndarray) -> "FairComponents":
        """As liveness.fair_components: the region's states from which a fair behaviour can
        stay in it forever."""
        cyclic = self.cyclic()
        mask = region & ~cyclic & self.stutters()
        component = None  # where no state of the region lies on a cycle: none has a component
        inner = region & cyclic
        if inner.any():
            component = np.full(self.n, -1, dtype=np.int64)
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
        staying = unmet_in(pairs, np.flatnonzero(self.may_stay()))  # per pair: a stall may last
        live = [number for number in range(len(pairs)) if staying[number] and pairs[number][0].any()]
        with self.timed("liveness:region"):
            regions = self.stalled_regions({number: pairs[number] for number in live})
        for number in live:
            triggers, unmet = pairs[number]
            region = regions[number]
            with self.timed("liveness:fairness"):
                fair = self.fair_components(region)
            if not fair.mask.any():
                continue
            with self.timed("liveness:lasso"):  # a later pair takes the lasso only with a shorter prefix
                prefix = self.shortest_prefix(initial, triggers, region, fair, None if best is None else len(best[1]))
            if prefix is not None:
                best = (number, prefix, fair)
        if best is None:
            return None
        number, prefix, fair = best
        return Counterexample(number, liveness.lasso(self.walker(), prefix, fair.component_of(prefix[-1][1])))

    def shortest_prefix(self, initial, triggers: np.ndarray, region: np.ndarray, fair: "FairComponents",
                        shorter_than: int | None = None) -> list | None:
        """liveness.shortest_prefix, a breadth-first level at a time (as `product_prefix`):
        node 2 * state + phase, each level in the order liveness.py's queue would hold it
        (by source in order, edge in recorded order, then phase 0 and, at a trigger
        entered from phase 0, phase 1; from phase 1 only into the region), each node at
        its first occurrence; so the same path, [(label or None, state)]. None where no
        path of fewer than `shorter_than` states reaches a fair component."""
        triggered = triggers[:, None]
        seen = np.zeros(2 * self.n, dtype=bool)
        nodes = self.entered(np.asarray(initial, dtype=np.int64), triggered, 2).reshape(-1)
        order = np.arange(len(nodes)) // 2
        keep = nodes >= 0
        nodes, _ = first_occurrences(nodes[keep], order[keep], seen)
        levels = [(nodes, np.full(len(nodes), -1, dtype=np.int64), np.full(len(nodes), -1, dtype=np.int64))]
        while True:
            nodes = levels[-1][0]
            done = np.flatnonzero((nodes % 2 == 1) & fair.mask[nodes // 2])
            if len(done) and (shorter_than is None or len(levels) < shorter_than):  # this level's: len(levels) states
                return self.unwound(levels, int(done[0]), 2)[0]
            if shorter_than is not None and len(levels) + 1 >= shorter_than:
                return None
            if not len(nodes):
                raise ValueError("no fair component is reachable: the region was not computed from this graph")
            parts, base = [], 0
            for part in chunks(nodes):
                index, source = edge_rows(self.offsets, part // 2)
                target = self.targets[index].astype(np.int64)
                candidates = self.entered(target, triggered, 2)  # from phase 0
                following = np.flatnonzero(part[source] % 2 == 1)
                candidates[following, 0] = np.where(region[target[following]], target[following] * 2 + 1, -1)
                candidates[following, 1] = -1
                parts.append(self.first_reached(candidates, index, base + source, seen))
                base += len(part)
            levels.append(tuple(np.concatenate(column) for column in zip(*parts)))

    # ------------------------------------------- under symmetry reduction

    def find_violation_reduced(self, initial: Sequence[int], pairs, symmetry: liveness.Symmetry):
        """liveness.find_violation_reduced on this graph: the same decision (each pair
        followed through the permutations its edges apply, on the product of
        representatives and pair indices; QuotientCycle where a stall might go round a
        cycle) and the same lasso: the region swept or searched (`product_region`), the
        shortest prefix to a stall a level at a time (`product_prefix`)."""
        if not any(triggers.any() for triggers, _ in pairs):
            return None
        unmet_anywhere = np.zeros(self.n, dtype=bool)
        for _, unmet in pairs:
            unmet_anywhere |= unmet
        if not (unmet_anywhere & self.may_stay()).any():
            return None
        del unmet_anywhere
        moved = np.array(liveness.pair_map_per_label(symmetry), dtype=np.int64).reshape(-1, len(pairs))
        with self.timed("liveness:region"):
            region = self.product_region(pairs, moved)
        if (region & self.cyclic()).any():
            raise QuotientCycle("a stalled region of the reduced graph has a cycle")
        if not (region & self.stutters()).any():
            return None
        with self.timed("liveness:lasso"):
            steps, pair = self.product_prefix(initial, pairs, moved, np.stack([unmet for _, unmet in pairs]))
        loop = len(steps) - 1
        reasons = tuple((family, "disabled", loop) for family in self.families)
        return Counterexample(liveness.first_pair(steps, pair, symmetry), Lasso(tuple(steps), loop, None, reasons))

    def followed(self, nodes: np.ndarray, width: int, moved: np.ndarray, first: int):
        """The edges out of product nodes (state * width + phase, phase `first` + j
        following pair j): (edge index, the position of its source among `nodes`,
        destination, the phase at the source, the pair at the destination, -1 where
        the source follows none)."""
        index, source = edge_rows(self.offsets, nodes // width)
        phase = (nodes % width)[source]
        pair = np.full(len(index), -1, dtype=np.int64)
        following = phase >= first
        pair[following] = moved[self.labels[index[following]].astype(np.int64), phase[following] - first]
        return index, source, self.targets[index].astype(np.int64), phase, pair

    def product_region(self, pairs, moved: np.ndarray) -> np.ndarray:
        """liveness.product_region: the representatives where some pair, followed through
        the permutations, is reachable from its trigger without its conclusion holding.
        On an acyclic graph one sweep in topological order (Kahn's rounds), the pairs
        stalled at a state as the bits of a mask, each edge permuting it by a table;
        otherwise a frontier search over (state, pair)."""
        if not self.cyclic().any() and len(pairs) <= SWEPT_PAIRS:
            return self.swept_product_region(pairs, moved)
        return self.searched_product_region(pairs, moved, np.stack([unmet for _, unmet in pairs]))

    def searched_product_region(self, pairs, moved: np.ndarray, unmet: np.ndarray) -> np.ndarray:
        m = len(pairs)
        seen = np.zeros(self.n * m, dtype=bool)  # product node: state * m + pair index
        frontier = np.concatenate([np.flatnonzero(triggers) * m + j for j, (triggers, _) in enumerate(pairs)])
        seen[frontier] = True
        while len(frontier):
            found = []
            for part in chunks(frontier):
                _, _, target, _, pair = self.followed(part, m, moved, 0)
                node = target * m + pair
                new = sorted_unique(node[unmet[pair, target] & ~seen[node]])
                seen[new] = True
                found.append(new)
            frontier = np.concatenate(found)
        return seen.reshape(self.n, m).any(axis=1)

    def swept_product_region(self, pairs, moved: np.ndarray) -> np.ndarray:
        m = len(pairs)
        dtype = smallest_unsigned(m)
        reached = pair_bits([triggers for triggers, _ in pairs], dtype)
        unmet_bits = pair_bits([unmet for _, unmet in pairs], dtype)
        masks = np.arange(1 << m)
        permuted = np.zeros((len(moved), 1 << m), dtype=dtype)  # label, mask at the source -> mask after
        for j in range(m):
            permuted |= np.where(masks & (1 << j), np.left_shift(1, moved[:, j:j + 1]), 0).astype(dtype)
        for nodes in self._rounds:  # a round's states have no edge among them: any split of it will do
            for part in chunks(nodes[reached[nodes] != 0]):
                index, counts = edge_index(self.offsets, part)
                target = self.targets[index]
                or_at(reached, target, permuted[self.labels[index], np.repeat(reached[part], counts)] & unmet_bits[target])
        return reached != 0

    def product_prefix(self, initial, pairs, moved: np.ndarray, unmet: np.ndarray):
        """liveness.product_prefix, a breadth-first level at a time: each level's nodes in
        the order the queue of liveness.py would hold them (by source in order, edge in
        recorded order, then the phases entered: 0, then each triggered pair's), each
        node kept at its first occurrence. ([(label or None, state)], the pair at the end)."""
        m, width, stutters = len(pairs), len(pairs) + 1, self.stutters()
        triggered = np.stack([triggers for triggers, _ in pairs], axis=1)  # state x pair index
        seen = np.zeros(self.n * width, dtype=bool)
        levels = []  # per level: (nodes, the position of each's parent in the level before, label)
        start = np.asarray(initial, dtype=np.int64)
        nodes = self.entered(start, triggered, width).reshape(-1)
        order = np.arange(len(nodes)) // width
        keep = nodes >= 0
        nodes, _ = first_occurrences(nodes[keep], order[keep], seen)
        levels.append((nodes, np.full(len(nodes), -1, dtype=np.int64), np.full(len(nodes), -1, dtype=np.int64)))
        while True:
            nodes = levels[-1][0]
            done = np.flatnonzero((nodes % width > 0) & stutters[nodes // width])
            if len(done):
                return self.unwound(levels, int(done[0]), width)
            if not len(nodes):
                raise ValueError("no stall is reachable: the region was not computed from this graph")
            parts, base = [], 0
            for part in chunks(nodes):
                index, source, target, phase, pair = self.followed(part, width, moved, 1)
                candidates = self.entered(target, triggered, width)  # from phase 0
                following = phase > 0
                candidates[following] = -1
                on = following & unmet[np.maximum(pair, 0), target]
                candidates[on, 0] = target[on] * width + 1 + pair[on]
                parts.append(self.first_reached(candidates, index, base + source, seen))
                base += len(part)
            levels.append(tuple(np.concatenate(column) for column in zip(*parts)))

    def first_reached(self, candidates: np.ndarray, index: np.ndarray, parent: np.ndarray, seen: np.ndarray) -> tuple:
        """A part of a breadth-first level from its candidate nodes (a row per edge, in
        order, -1 where none): the nodes not `seen` yet at their first occurrence (marked
        seen now), the position of each's parent in the level before (`parent`, per edge)
        and the label of the edge that reached it."""
        flat = candidates.reshape(-1)
        edge = np.arange(len(flat)) // candidates.shape[1]
        keep = flat >= 0
        new, first = first_occurrences(flat[keep], edge[keep], seen)
        return new, parent[first], self.labels[index[first]].astype(np.int64)

    def entered(self, states: np.ndarray, triggered: np.ndarray, width: int) -> np.ndarray:
        """Per state, the product nodes entering it from phase 0 gives, in liveness.py's
        order: phase 0, then phase 1 + j for each pair j triggered there (-1 where not)."""
        candidates = np.full((len(states), width), -1, dtype=np.int64)
        candidates[:, 0] = states * width
        phases = states[:, None] * width + np.arange(1, width)
        candidates[:, 1:] = np.where(triggered[states], phases, -1)
        return candidates

    def unwound(self, levels, position: int, width: int) -> tuple[list, int]:
        """The path the levels stored to the node at `position` of the last level, and its pair."""
        node = int(levels[-1][0][position])
        path = []
        for nodes, parent, label in reversed(levels):
            path.append((None if label[position] < 0 else int(label[position]), int(nodes[position]) // width))
            position = int(parent[position])
        path.reverse()
        return path, node % width - 1

    def walker(self) -> "ListGraph":
        """The graph as Python lists, for liveness.py's path searches (only where a pair fails)."""
        with self._lock:
            if getattr(self, "_walker", None) is None:
                self._walker = ListGraph(self)
        return self._walker


def first_occurrences(nodes: np.ndarray, order: np.ndarray, seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The `nodes` not `seen` yet, each at its first occurrence, in order (marked seen now),
    and the `order` entry (the edge or the state it came from) of each."""
    fresh = ~seen[nodes]
    nodes, order = nodes[fresh], order[fresh]
    unique, first = np.unique(nodes, return_index=True)
    first.sort()
    seen[unique] = True
    return nodes[first], order[first]


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted: one sort and a neighbour mask. numpy 2's `np.unique`
    hashes instead, several times slower on the tens of millions of ids met here."""
    values = np.sort(values)
    if len(values) > 1:
        values = values[np.concatenate(([True], values[1:] != values[:-1]))]
    return values


def or_at(array: np.ndarray, index: np.ndarray, bits: np.ndarray) -> None:
    """`np.bitwise_or.at(array, index, bits)`, three times faster: numpy's `maximum.at`
    has a fast loop that `bitwise_or.at` lacks. Each entry takes the greatest of its own
    value or'ed with each of its bits, which keeps its own and one edge's; the few entries
    whose edges bring different bits get the rest by `bitwise_or.at`."""
    bits = bits | array[index]
    np.maximum.at(array, index, bits)
    lost = np.flatnonzero((array[index] & bits) != bits)
    if len(lost):
        np.bitwise_or.at(array, index[lost], bits[lost])


def pair_bits(masks: Sequence[np.ndarray], dtype) -> np.ndarray:
    """Per state, mask j (booleans) as bit j of one integer of `dtype`."""
    bits = np.zeros(len(masks[0]), dtype=dtype)
    for j, mask in enumerate(masks):
        bits |= mask.view(np.uint8).astype(dtype) << dtype(j)
    return bits


def smallest_unsigned(bits: int):
    """The narrowest unsigned numpy type holding `bits` bits."""
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        if bits <= 8 * np.dtype(dtype).itemsize:
            return dtype
    raise ValueError(f"{bits} bits do not fit one machine word")


class FairComponents:
    """liveness.FairComponents over arrays: `mask` per state, and the fair component of each
    state that lies in one with an edge inside (-1 elsewhere; None where no state does)."""

    def __init__(self, mask: np.ndarray, component: np.ndarray | None):
        self.mask, self.component = mask, component

    def component_of(self, v: int) -> frozenset:
        here = -1 if self.component is None else self.component[v]
        if here < 0:
            return frozenset((v,))
        return frozenset(np.flatnonzero(self.component == here).tolist())


class ListGraph:
    """What liveness.py's `shortest_prefix` and `lasso` read of a graph, a state at a time
    from the arrays: a breadth-first prefix to a stall visits a few levels, so converting
    the whole graph to Python lists (gigabytes at 26 million states) would be waste."""

    def __init__(self, graph: VectorGraph):
        self.n, self.families, self.label_bit = graph.n, graph.families, graph.label_bit
        self.all_families = graph.all_families
        self.offsets, self.targets, self.labels = graph.offsets, graph.targets, graph.labels
        self.enabled = Ints(graph.enabled)

    def edges_from(self, v: int):
        start, end = int(self.offsets[v]), int(self.offsets[v + 1])
        return zip(self.labels[start:end].tolist(), self.targets[start:end].tolist())


class Ints:
    """An integer array read an entry at a time as Python ints (as a list would give them)."""

    def __init__(self, array: np.ndarray):
        self.array = array

    def __getitem__(self, i: int) -> int:
        return int(self.array[i])

    def __len__(self) -> int:
        return len(self.array)


def per_state_reason(pair) -> str | None:
    """Why the vector engine evaluates `pair` on every decoded state rather than once per
    component: the side that reads the whole state (or no process in particular); None
    where both sides are evaluated per component or pair of them."""
    for side, reads in (("premise", pair.premise_reads), ("conclusion", pair.conclusion_reads)):
        if reads not in COMPONENT_READS:
            return f"its {side} reads the whole state"
        if reads != GLOBALS and pair.process is None:
            return f"its {side} reads a process's locals but the pair names no process"
    return None


COMPONENT_READS = (GLOBALS, PROCESS, PAIR)


class Probes:
    """The states a per-component predicate is evaluated on: globals id g with every
    process's locals those of locals id `lid` (the initial globals where only the locals
    count, the empty locals where only the globals do). Each is built once and shared
    by every predicate that reads the same components: the pairs of a property per
    process and time all probe the same states, and a run's properties share one
    `Probes` (`VectorExploration.probes`), decided one after another or side by side
    (a dict's get and set are atomic under the interpreter's lock; two threads building
    one state build equal ones). Each locals value's columns are zipped once. With
    `helpers` (helpers.py), a large batch of a named side's entries is evaluated there."""

    def __init__(self, engine, helpers=None):
        self.engine, self.helpers = engine, helpers
        self.columns: dict[int | None, tuple] = {}  # locals id (None: the empty locals) -> the local fields' columns
        self.made: dict[str, dict] = {GLOBALS: {}, PROCESS: {}, PAIR: {}}  # reads -> entry -> state

    def state(self, g: int | None, lid: int | None):
        engine = self.engine
        globals_ = engine.initial_globals if g is None else engine.globals[g]
        return engine.state_type(*globals_, *self.local_columns(lid))

    def local_columns(self, lid: int | None) -> tuple:
        """Every process's locals `lid` as the state's columns (what `Engine.assemble` zips)."""
        columns = self.columns.get(lid)
        if columns is None:
            local = self.engine.empty_local if lid is None else self.engine.locals[lid]
            columns = self.columns[lid] = tuple(zip(*[local] * self.engine.P))
        return columns

    def of(self, reads: str, at: int):
        """The state probing entry `at` of a table indexed as `reads` says (`table_index`)."""
        made = self.made[reads]
        found = made.get(at)
        if found is None:
            if reads == GLOBALS:
                found = self.state(at, None)
            elif reads == PROCESS:
                found = self.state(None, at)
            else:
                found = self.state(*divmod(at, len(self.engine.locals)))
            made[at] = found
        return found


# A pair side's values are kept in a table with an entry per pair of ids up to this many
# entries (a byte each); past it, as the pairs met, sorted (a side per process and peek
# would otherwise take globals x locals bytes each on the widest searches).
DENSE_PAIRS = 1 << 26


def table_index(engine, reads: str, G: np.ndarray, lids: np.ndarray | None) -> tuple[np.ndarray, int]:
    """Per state (its globals' ids `G`, its process's locals' ids `lids`), the entry of a
    table indexed as `reads` says, and the table's size: the globals id, the locals id,
    or the pair of them as globals id * locals + locals id."""
    if reads == GLOBALS:
        return G, len(engine.globals)
    if reads == PROCESS:
        return lids, len(engine.locals)
    return G.astype(np.int64) * len(engine.locals) + lids, len(engine.globals) * len(engine.locals)


class ComponentTruth:
    """A predicate's value per component, computed as the components are met: per globals
    id, per locals id, or per pair (globals id, locals id), on `Probes`' states."""

    def __init__(self, probes: Probes, predicate, reads: str, side: tuple | None = None):
        self.probes, self.predicate, self.reads = probes, predicate, reads
        self.side = side  # (property, pair index, 0 premise or 1 conclusion, the pair's text): how helpers name it
        self.table = np.zeros(0, dtype=np.int8)  # -1: not computed yet, else 0 or 1
        self.met, self.values = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)  # past DENSE_PAIRS

    def at(self, index: np.ndarray, size: int) -> np.ndarray:
        """The predicate's value per entry of `index` into a table of `size` (`table_index`)."""
        if self.reads == PAIR and size > DENSE_PAIRS:
            return self.sparse(index)
        if len(self.table) < size:
            grown = np.full(size, -1, dtype=np.int8)
            grown[:len(self.table)] = self.table
            self.table = grown
        found = self.table.take(index)
        if found.min(initial=0) < 0:
            missing = sorted_unique(index[found < 0])
            self.table[missing] = self.computed(missing)
            found = self.table.take(index)
        return found.view(bool)

    def sparse(self, index: np.ndarray) -> np.ndarray:
        """`at` for pairs of ids kept sorted as met: the new ones computed and merged in."""
        where = np.minimum(np.searchsorted(self.met, index), max(len(self.met) - 1, 0))
        known = self.met[where] == index if len(self.met) else np.zeros(len(index), dtype=bool)
        if not known.all():
            new = sorted_unique(index[~known])
            met = np.concatenate([self.met, new])
            order = np.argsort(met, kind="stable")  # two sorted runs: merged in linear time
            self.met = met[order]
            self.values = np.concatenate([self.values, self.computed(new)])[order]
            where = np.searchsorted(self.met, index)
        return self.values[where]

    def computed(self, entries: np.ndarray) -> list[bool]:
        """The predicate on the probe of each entry: where a leads-to's Python runs."""
        predicate, probe, reads, entries = self.predicate, self.probes.of, self.reads, entries.tolist()
        helpers = self.probes.helpers
        if helpers is not None and self.side is not None:
            values = helpers.truths(self.side, reads, entries)
            if values is not None:
                return values
        with collector_paused():
            return [bool(predicate(probe(reads, at))) for at in entries]


@contextmanager
def collector_paused():
    """The cyclic garbage collector off while probe states are made: they hold no cycle,
    and a collection walks every state made so far (hundreds of thousands, kept for the
    other sides), a third of the masks' time on HoldsSealAlias at P=2. With properties
    decided side by side, the first to pause it turns it back on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def leads_to_masks(run, pairs, truths: list | None = None) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[bool]]:
    """Per leads-to pair, (triggers, unmet) over the run's states as boolean arrays, and
    whether its premise holds in some state. A side that reads the globals, its process's
    locals or both (`engine.LeadsTo`) is evaluated once per component or pair of them
    and gathered onto the states a level at a time; a pair with a side that reads the
    whole state (`per_state_reason`) is evaluated on every decoded state. `truths`, when
    given, are the pairs' sides (`pair_truths`), with the values they computed already."""
    engine, n = run.engine, run.distinct_states
    masks: list = [None] * len(pairs)
    premised: list = [False] * len(pairs)  # None: no trigger, and the premise not evaluated elsewhere
    if truths is None:
        truths = pair_truths(engine, pairs)
    whole = [i for i, sides in enumerate(truths) if sides is None]
    truths = {i: sides for i, sides in enumerate(truths) if sides is not None}  # pair index -> its sides
    for i in truths:
        masks[i] = (np.empty(n, dtype=bool), np.empty(n, dtype=bool))
    if whole:  # every decoded state, once for all such pairs
        found = liveness.leads_to_masks(run.decoded_states(), [(pairs[i].premise, pairs[i].conclusion) for i in whole])
        for i, (triggers, unmet) in zip(whole, found):
            masks[i] = (np.frombuffer(bytes(triggers), dtype=bool).copy(),
                        np.frombuffer(bytes(unmet), dtype=bool).copy())
            premised[i] = True if masks[i][0].any() else None
    for offset, G, L in run.level_components() if truths else ():  # a level at a time, not the whole graph
        here = slice(offset, offset + len(G))
        indices = {}  # (reads, process) -> this level's table entries, shared by the sides that read alike

        def value(truth: ComponentTruth, process: int | None) -> np.ndarray:
            key = (truth.reads, None if truth.reads == GLOBALS else process)  # a pair on the globals alone
            if key not in indices:
                indices[key] = table_index(engine, truth.reads, G, None if key[1] is None else L[key[1]])
            return truth.at(*indices[key])

        for i, (premise, conclusion) in truths.items():
            triggers, unmet = masks[i]
            holds = value(premise, pairs[i].process)
            premised[i] = premised[i] or bool(holds.any())
            np.logical_not(value(conclusion, pairs[i].process), out=unmet[here])
            np.logical_and(holds, unmet[here], out=triggers[here])
    return masks, premised


def pair_truths(engine, pairs, probes: Probes | None = None, name: str | None = None) -> list:
    """Per pair, its (premise, conclusion) as ComponentTruth over one set of probes (new
    where none is given), or None where a side reads the whole state (`per_state_reason`).
    `name`, the property's, names each side to the probes' helpers."""
    probes = Probes(engine) if probes is None else probes

    def side(i: int, which: int) -> tuple | None:
        return None if name is None else (name, i, which, pairs[i].text)

    return [None if per_state_reason(pair) is not None else
            (ComponentTruth(probes, pair.premise, pair.premise_reads, side(i, 0)),
             ComponentTruth(probes, pair.conclusion, pair.conclusion_reads, side(i, 1)))
            for i, pair in enumerate(pairs)]


def unmet_in(pairs, states: np.ndarray) -> list[bool]:
    """Per pair of `pairs` ((triggers, unmet) each, or `LeadsToMasks`), whether its
    conclusion fails in one of `states` (ids, ascending)."""
    if isinstance(pairs, LeadsToMasks):
        return pairs.unmet_in(states)
    return [bool(unmet[states].any()) for _, unmet in pairs]


# `LeadsToMasks.unmet_in` evaluates the conclusions on the states asked about alone up to
# this share of all states; past it, it computes the whole masks.
FEW_STATES = 1 / 8


class LeadsToMasks:
    """`leads_to_masks` of a run, computed when first read: (triggers, unmet) per pair.
    A stall can only last in a state a fair behaviour may stay in (one that stutters or
    lies on a cycle: a few hundred among millions where the clock only advances), so
    `unmet_in` asks the conclusions there alone: a property whose conclusions hold in
    all of them holds without the masks (`VectorGraph.find_violation`), and `premised`
    then looks for the premises alone, level by level until each is found. The three
    share the predicates' values per component."""

    def __init__(self, run, pairs, parts: dict | None = None, probes: Probes | None = None, name: str | None = None):
        self.run, self.pairs = run, pairs
        self.parts = {} if parts is None else parts
        self._masks = self._premised = None
        self.truths = pair_truths(run.engine, pairs, probes, name)
        self.per_state = any(sides is None for sides in self.truths)

    @contextmanager
    def timed(self):
        started = time.thread_time()  # this thread's, as `VectorGraph.timed`
        try:
            yield
        finally:
            self.parts["liveness:masks"] = self.parts.get("liveness:masks", 0.0) + time.thread_time() - started

    def arrays(self) -> list[tuple[np.ndarray, np.ndarray]]:
        if self._masks is None:
            with self.timed():
                self._masks, self._premised = leads_to_masks(self.run, self.pairs, self.truths)
        return self._masks

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        return self.arrays()[i]

    def __iter__(self):
        return iter(self.arrays())

    def unmet_in(self, states: np.ndarray) -> list[bool]:
        """Per pair, whether its conclusion fails in one of `states` (ids, ascending)."""
        if self._masks is not None or self.per_state or len(states) > FEW_STATES * self.run.distinct_states:
            return [bool(unmet[states].any()) for _, unmet in self.arrays()]
        with self.timed():
            G, L = components_at(self.run, states)
            return [not side_values(self.run.engine, conclusion, pair, G, L).all()
                    for pair, (_, conclusion) in zip(self.pairs, self.truths)]

    def premised(self) -> list[bool | None]:
        """Per pair, whether its premise holds in some state (None: not told, for a pair
        evaluated on every state with no trigger)."""
        if self._premised is None and not self.per_state:
            with self.timed():
                self._premised = premises_per_component(self.run, self.pairs, self.truths)
        if self._premised is None:
            self.arrays()
        return self._premised


def side_values(engine, truth: ComponentTruth, pair, G: np.ndarray, L: list) -> np.ndarray:
    """A side of `pair` per state of components `G`, `L` (its globals' ids, each process's
    locals' ids)."""
    return truth.at(*table_index(engine, truth.reads, G, None if pair.process is None else L[pair.process]))


def components_at(run, states: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The globals' ids and each process's locals' ids of `states` (ids, ascending)."""
    G, L = [], [[] for _ in range(run.engine.P)]
    for level in run.levels:
        lo, hi = np.searchsorted(states, [level.offset, level.offset + len(level)])
        g, locals_ = level.layout.decode(level.keys[states[lo:hi] - level.offset])
        G.append(g)
        for p, column in enumerate(locals_):
            L[p].append(column)
    return np.concatenate(G), [np.concatenate(column) for column in L]


def premises_per_component(run, pairs, truths) -> list[bool]:
    """Per pair, whether its premise holds in some state, a level at a time until found."""
    found = [False] * len(pairs)
    for _, G, L in run.level_components():
        for i, pair in enumerate(pairs):
            found[i] = found[i] or bool(side_values(run.engine, truths[i][0], pair, G, L).any())
        if all(found):
            break
    return found
