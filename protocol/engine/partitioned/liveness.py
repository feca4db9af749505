"""Liveness decided where a partitioned search's edges lie, and the graph gathered when not.

The partitions keep their edges in rows by the owner of each target
(partition.py). `LivenessShare` is a partition's part: its leads-to masks,
Kahn's peeling and the stalled regions grown across the partitions (each
round sends the edges into other partitions as raw state ids), whether a
premise is reached among its states. `DistributedLiveness` is the
coordinator's: `liveness_holds` decides a property without gathering the
graph where it can, and otherwise `gather_edges` brings the edges to the
coordinator, the states numbered globally by (level, key), for the
sequential decision and its lasso. Knows nothing of the protocol.
"""

from __future__ import annotations

import heapq
from array import array
from collections import deque
from itertools import chain, compress, repeat
from operator import add, and_, not_
from typing import Callable

from protocol.engine.liveness import in_degrees, peel, spread


class LivenessShare:
    """The partition's side (a mixin of `partition.Partition`)."""

    def leads_to_masks(self, pairs_of: Callable) -> list[tuple[bytes, bytes]]:
        """Per leads-to pair, (triggers, unmet) over this partition's states in the order
        of the global numbering (`levels` first)."""
        from protocol.engine.fast import leads_to_masks

        pairs = pairs_of(self.model)
        states = list(map(self.states.__getitem__, self.sorted_ids))
        return [(bytes(a), bytes(b)) for a, b in leads_to_masks(self.engine, states, pairs)]

    def screen_rows(self, sizes: list[int]) -> list:
        """Set up deciding liveness where the edges lie (`ParallelExploration.liveness_holds`):
        the rows of edges by owner of their targets, which states stutter (no fair
        family enabled in them). Returns, per other partition, how many edges go from
        here into each of its states (raw int64s), for its in-degrees."""
        self.rows = [(self._closed_row_offsets(owner), self.row_targets[owner]) for owner in range(self.count)]
        self.stutters = bytearray(map(not_, self.enabled))
        return [None if owner == self.me else in_degrees(self.row_targets[owner], sizes[owner]).tobytes()
                for owner in range(self.count)]

    def _outboxes(self) -> tuple[list, list]:
        """The rows into other partitions with an empty outbox each, and the outboxes by owner."""
        boxes = [None if owner == self.me else array("q") for owner in range(self.count)]
        remote = [(*self.rows[owner], boxes[owner]) for owner in range(self.count) if owner != self.me]
        return remote, boxes

    @staticmethod
    def _sent(boxes: list) -> list:
        return [box.tobytes() if box else None for box in boxes]

    @staticmethod
    def _received(batches: list):
        """The state ids in the batches sent here, one after another."""
        for raw in batches:
            if raw:
                ids = array("q")
                ids.frombytes(raw)
                yield from ids

    def peel_start(self, counts: list) -> list:
        """Kahn's peeling over the whole graph, this partition's share: the in-degrees of
        its states (the edges from here and, `counts`, from the others), then the
        peeling of what has none. Returns the outboxes (edges into other partitions
        from the states removed)."""
        offsets, targets = self.rows[self.me]
        self.incoming = in_degrees(targets, len(self.states))
        for raw in counts:
            if raw:
                more = array("q")
                more.frombytes(raw)
                self.incoming = array("q", map(add, self.incoming, more))
        ready = [v for v, degree in enumerate(self.incoming) if not degree]
        return self._peel(ready)

    def peel_more(self, batches: list) -> list:
        """Lower the in-degrees by the edges the other partitions' removed states sent here,
        and go on peeling."""
        incoming, ready = self.incoming, []
        for w in self._received(batches):
            incoming[w] -= 1
            if not incoming[w]:
                ready.append(w)
        return self._peel(ready)

    def _peel(self, ready: list) -> list:
        remote, boxes = self._outboxes()
        peel(*self.rows[self.me], self.incoming, ready, remote)
        return self._sent(boxes)

    def peel_left(self) -> int:
        """How many of this partition's states peeling left: on or after a cycle."""
        return sum(map(bool, self.incoming))

    def screen_pairs(self, pairs_of: Callable) -> list[tuple[bool, bool]]:
        """The leads-to masks over this partition's states, kept for `spread_start`; per
        pair, whether a trigger lies here, and whether a state here where the
        conclusion fails could stutter."""
        from protocol.engine.fast import leads_to_masks

        self.masks = leads_to_masks(self.engine, self.states, pairs_of(self.model))
        return [(any(triggers), any(map(and_, unmet, self.stutters))) for triggers, unmet in self.masks]

    def spread_start(self, pair: int) -> list:
        """The stalled region of one pair, this partition's share: grown from its triggers
        (`liveness.stalled_region`). Returns the outboxes."""
        triggers, unmet = self.masks[pair]
        self.region, self.unmet = bytearray(triggers), unmet
        return self._spread(deque(compress(range(len(self.states)), triggers)))

    def spread_more(self, batches: list) -> list:
        """Grow the region into the states the other partitions' regions reach here."""
        region, unmet, frontier = self.region, self.unmet, deque()
        for w in self._received(batches):
            if unmet[w] and not region[w]:
                region[w] = 1
                frontier.append(w)
        return self._spread(frontier)

    def _spread(self, frontier: deque) -> list:
        remote, boxes = self._outboxes()
        spread(*self.rows[self.me], self.region, self.unmet, frontier, remote)
        return self._sent(boxes)

    def region_stalls(self) -> bool:
        """Whether a state of this partition's share of the region may stutter there."""
        return any(map(and_, self.region, self.stutters))

    def premises_reached(self, pairs_of: Callable, which: list) -> list[bool]:
        """Per pair numbered in `which`, whether its premise holds in one of this partition's states."""
        from protocol.engine.fast import premises_reached

        pairs = [pairs_of(self.model)[i] for i in which]
        return list(premises_reached(self.engine, self.states, pairs, [(b"", b"")] * len(pairs)))

    def first_reached(self, predicates: dict) -> dict:
        """Per named state predicate, the first level (from 1) where one of this partition's
        states satisfies it (its ids run level by level), or None."""
        found, looking = dict.fromkeys(predicates), dict(predicates)
        for state_id, packed in enumerate(self.states):
            if not looking:
                break
            state = self.engine.decode(packed)
            for name in [name for name, holds in looking.items() if holds(state)]:
                found[name] = self.level_of(state_id)
                del looking[name]
        return found

    def screen_done(self) -> None:
        """Drop what deciding in place kept (the graph is gathered next, or not at all)."""
        self.rows = self.masks = self.incoming = self.region = self.unmet = self.stutters = None


class DistributedLiveness:
    """The coordinator's side (a mixin of `parallel.ParallelExploration`)."""

    def number_globally(self) -> None:
        """Global ids independent of N: every state by (level, key), merged from the
        partitions (each gives its ids in that order). Sets `owner_of[gid]`,
        `local_of[gid]` and each worker's local -> global ids (`global_ids`)."""
        parts = self.pool.call("levels", [()] * len(self.sizes))
        streams = []
        for worker, (raw_keys, bounds, raw_ids) in enumerate(parts):
            keys, ids = array("Q"), array("q")
            keys.frombytes(raw_keys)
            ids.frombytes(raw_ids)
            level_of = array("l", bytes(8 * len(keys)))
            for level, (start, end) in enumerate(zip(bounds, bounds[1:] + [len(keys)]), start=1):
                level_of[start:end] = array("l", [level]) * (end - start)
            streams.append(zip(level_of, keys, repeat(worker), ids))
        self.owner_of, self.local_of = array("b"), array("q")
        self.global_ids = [array("q", bytes(len(raw_ids))) for _, _, raw_ids in parts]
        for global_id, (_, _, worker, local) in enumerate(heapq.merge(*streams)):
            self.owner_of.append(worker)
            self.local_of.append(local)
            self.global_ids[worker][local] = global_id

    def gathered_masks(self, pairs_of: Callable) -> list:
        """Per leads-to pair, (triggers, unmet) over the global ids, computed by the partitions
        in their own order and interleaved here as the global numbering does."""
        per_worker = self.pool.call("leads_to_masks", [(pairs_of,)] * len(self.sizes))

        def interleaved(parts):
            streams = [iter(part) for part in parts]
            return bytearray(map(next, map(streams.__getitem__, self.owner_of)))

        return [(interleaved([masks[i][0] for masks in per_worker]), interleaved([masks[i][1] for masks in per_worker]))
                for i in range(len(per_worker[0]))]

    def liveness_holds(self, pairs_of: Callable) -> bool:
        """Whether every leads-to pair of `pairs_of(model)` holds, decided by the partitions
        on the edges where they lie, without gathering the graph. True only when it
        holds; False when this cannot tell, and then the caller gathers the graph and
        decides (and finds the lasso) as the sequential search does.

        It decides as `liveness.find_violation` does on a graph without a cycle. There
        a fair behaviour can stay among the states where a conclusion fails only by
        stuttering in one where no fair family is enabled; so a pair holds when it
        has no trigger, or no such state fails its conclusion, or none lies in its
        stalled region (grown from the triggers across the partitions). A region
        that has such a state fails with or without cycles, so the regions come
        first; then Kahn's peeling across the partitions (once per run) proves
        that there is no cycle, where a fair behaviour might go round instead."""
        if self.gathered:
            return False
        if not self.laid_out:
            self.in_degrees = self.pool.call("screen_rows", [(self.sizes,)] * len(self.sizes))
            self.laid_out = True
        flags = self.flags = self.pool.call("screen_pairs", [(pairs_of,)] * len(self.sizes))
        for pair in range(len(flags[0])):
            if not any(found[pair][0] for found in flags) or not any(found[pair][1] for found in flags):
                continue  # no trigger, or nowhere to stutter while the conclusion fails
            self._rounds("spread_start", [(pair,)] * len(self.sizes), "spread_more")
            if any(self.pool.call("region_stalls", [()] * len(self.sizes))):
                return False
        if self.acyclic is None:
            self.acyclic = self._peel()
        return self.acyclic

    def _peel(self) -> bool:
        """Kahn's peeling across the partitions: whether it removes every state (no cycle)."""
        workers = len(self.sizes)
        self._rounds("peel_start", [([self.in_degrees[sender][owner] for sender in range(workers)],)
                                    for owner in range(workers)], "peel_more")
        self.in_degrees = None  # used: a few bytes per state, not kept
        return not sum(self.pool.call("peel_left", [()] * workers))

    def _rounds(self, start: str, arguments: list, more: str) -> None:
        """Partition methods that spread along edges: `start`, then `more` with what the
        others sent each partition, until none sends anything (each answers its
        outboxes, raw state ids per owner)."""
        workers = len(self.sizes)
        outboxes = self.pool.call(start, arguments)
        while any(box for boxes in outboxes for box in boxes):
            outboxes = self.pool.call(more, [([boxes[owner] for boxes in outboxes],) for owner in range(workers)])

    def gather_edges(self) -> None:
        """The edges of every partition, grouped by source in global id order (so that the
        liveness graph takes them as they are): each partition's rows, interleaved as
        the global numbering interleaves the partitions' states."""
        if self.laid_out:
            self.pool.call("screen_done", [()] * len(self.sizes))
        self.number_globally()
        raw_ids = [ids.tobytes() for ids in self.global_ids]
        parts, enabled = [], []
        for degrees_raw, labels_raw, targets_raw, enabled_raw in self.pool.call("edges",
                                                                                [(raw_ids,)] * len(self.sizes)):
            degrees, labels, targets, masks = array("q"), array("i"), array("q"), array("q")
            degrees.frombytes(degrees_raw)
            labels.frombytes(labels_raw)
            targets.frombytes(targets_raw)
            masks.frombytes(enabled_raw)
            parts.append((iter(degrees), labels, targets))
            enabled.append(iter(masks))
        # each state's enabled fair families, for the liveness graph (`run.enabled`)
        self.enabled = list(map(next, map(enabled.__getitem__, self.owner_of)))
        labels_in_order, self.edge_dst = array("i"), array("q")
        at = [0] * len(parts)
        degree_of = array("q")
        for worker in self.owner_of:
            degrees, labels, targets = parts[worker]
            degree = next(degrees)
            start = at[worker]
            at[worker] = start + degree
            degree_of.append(degree)
            labels_in_order.extend(labels[start:start + degree])
            self.edge_dst.extend(targets[start:start + degree])
        self.edge_label = array("q", labels_in_order)
        self.edge_src = array("q", chain.from_iterable(map(repeat, range(len(degree_of)), degree_of)))
        self.gathered = True
