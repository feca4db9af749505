"""Whole instances on the vector engine. Knows nothing of the protocol.

A whole instance (a step that reads and writes every process's locals) has no
component to memoise on: its successor from a state is a function of all of the
state's component ids. So it is run per frontier row, on the state those ids
assemble, through the packed engine (`Engine.whole_successor`, which interns what
it writes and checks its step's by-component properties), and its successors are
gathered as arrays like any other instance's.

Where it lies in the enumeration decides where its successors go:

- among the controller's instances (before the first process instance), it joins
  the controller's successors of each row: the controller segments it splits and
  the whole instances are merged, per row, in their enumeration order
  (`head_successors`), so that a row's successors stay in the packed engine's
  order;
- after a process instance, it is a block of its own in that place, as a wide
  instance is (its next globals and every process's next locals per enabled row).

An *each* instance (engine.EACH: its guard and its effect on the globals read
only the globals, and it rewrites each process's locals by the globals and that
process's locals alone) is memoised instead per pair of (globals, one process's
locals), as a wide one is: its step runs once per pair, on the state whose every
process has those locals, and a row's successor is gathered from its P pairs
(`EachInstance`). What the footprint claims is checked, not trusted: every row's
pairs must agree on the guard and the next globals, and for every pair computed,
the first row that has it is also run whole and must give the same successor;
else one ModelError line names the instance and says to give it a whole footprint.

Their fairness needs nothing more: the liveness reads which families are enabled
in a state from the labels of the steps out of it, a whole instance's among them.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from protocol.engine import EACH, ModelError
from protocol.engine.fast import Engine
from protocol.engine.vector.liveness import sorted_unique

SHIFT = 32  # a pair of (globals id, locals id) as one int64: the globals' id above the locals'


class WholeInstance:
    """One whole instance: its label id and readable step."""

    def __init__(self, label_id: int, step: Callable):
        self.label_id, self.step = label_id, step

    def successors(self, engine: Engine, G: np.ndarray, L: list, parts: dict) -> tuple:
        """Per row of (G, L): whether the instance is enabled, and for the enabled rows in
        order their next globals and each process's next locals. The readable step runs
        once per row (no two rows of a search are one state), its CPU seconds counted as
        the other readable actions' (`components`)."""
        clock = time.process_time()
        pack, unpack, successor, step = engine.pack, engine.unpack, engine.whole_successor, self.step
        enabled = np.zeros(len(G), dtype=bool)
        found = []
        rows = zip(G.tolist(), np.stack(L, axis=1).tolist()) if len(G) else ()
        for row, (g, local_ids) in enumerate(rows):
            after = successor(step, pack(g, local_ids))
            if after is not None:
                enabled[row] = True
                g2, next_locals = unpack(after)
                found.append((g2, *next_locals))
        table = np.array(found, dtype=np.int64).reshape(len(found), 1 + len(L))
        parts["components"] = parts.get("components", 0.0) + time.process_time() - clock
        return enabled, table[:, 0], [table[:, 1 + p] for p in range(len(L))]


class EachInstance:
    """One each instance (engine.EACH), memoised per (globals id, locals id): sorted pair
    keys, and per key the next globals (-1: disabled) and each process's next locals."""

    def __init__(self, label_id: int, step: Callable, label, processes: int):
        self.label_id, self.step, self.label = label_id, step, label
        self.keys = np.zeros(0, dtype=np.int64)
        self.rows = np.zeros((0, 1 + processes), dtype=np.int64)

    def successors(self, engine: Engine, G: np.ndarray, L: list, parts: dict) -> tuple:
        """As `WholeInstance.successors`, gathered from each row's P pairs."""
        clock = time.process_time()
        pairs = [(G.astype(np.int64) << SHIFT) | column for column in L]
        new = self.fill(engine, pairs)
        found = [self.rows[np.searchsorted(self.keys, column)] for column in pairs]
        next_globals = found[0][:, 0]
        if any((rows[:, 0] != next_globals).any() for rows in found[1:]):
            raise ModelError(f"{self.label}: its guard or its effect on the globals reads a process's locals, "
                             "which an each footprint says it does not: give it a whole footprint")
        enabled = next_globals >= 0
        if len(new):
            self.check(engine, G, L, pairs, new, next_globals, found)
        rows = np.flatnonzero(enabled)
        parts["components"] = parts.get("components", 0.0) + time.process_time() - clock
        return enabled, next_globals[rows], [rows_of[rows, 1 + q] for q, rows_of in enumerate(found)]

    def fill(self, engine: Engine, pairs: list) -> np.ndarray:
        """Compute the pairs not memoised yet (the readable step, once each): their keys."""
        wanted = sorted_unique(np.concatenate(pairs))
        position = np.minimum(np.searchsorted(self.keys, wanted), max(len(self.keys) - 1, 0))
        new = wanted[self.keys[position] != wanted] if len(self.keys) else wanted
        if not len(new):
            return new
        computed = []
        for key in new.tolist():
            found = engine.each_successor(self.step, key >> SHIFT, key & ((1 << SHIFT) - 1))
            computed.append([-1] * self.rows.shape[1] if found is None else [found[0], *found[1]])
        keys = np.concatenate([self.keys, new])
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        self.rows = np.concatenate([self.rows, np.array(computed, dtype=np.int64)])[order]
        return new

    def check(self, engine: Engine, G, L, pairs: list, new: np.ndarray, next_globals, found: list) -> None:
        """Run the instance whole on the first row with each pair just computed, and demand
        the successor gathered from the pairs."""
        hits = [np.flatnonzero(np.isin(column, new)) for column in pairs]
        keys = np.concatenate([column[hit] for column, hit in zip(pairs, hits)])
        rows = np.concatenate(hits)
        _, first = np.unique(keys, return_index=True)
        for row in np.unique(rows[first]).tolist():
            local_ids = [int(column[row]) for column in L]
            real = engine.whole_successor(self.step, engine.pack(int(G[row]), local_ids))
            gathered = None if next_globals[row] < 0 else engine.pack(
                int(next_globals[row]), [int(rows_of[row, 1 + q]) for q, rows_of in enumerate(found)])
            if real != gathered:
                raise ModelError(f"{self.label} rewrites a process's locals by more than the globals and that "
                                 "process's locals, which an each footprint says it does not: give it a whole "
                                 "footprint")


def instance_of(engine: Engine, label_id: int, step: Callable):
    """The WholeInstance or EachInstance that runs instance `label_id` on the vector engine."""
    instance = engine.model.instances[label_id]
    if instance.footprint.kind == EACH:
        return EachInstance(label_id, step, instance.label, engine.P)
    return WholeInstance(label_id, step)


def head_of(order: list) -> list:
    """The entries of the packed engine's enumeration (`Engine.order`) before its first
    process instance: ("memo", segment) and ("whole", (label id, step))."""
    head = []
    for kind, which in order:
        if kind == "process":
            break
        head.append((kind, which))
    return head


def merged(parts: list, n: int) -> tuple:
    """Several parts of each row's successors, each as (count per row, label, next globals,
    next locals per process, in row order), as one in the same form, each row's
    successors the first part's, then the second's, and so on."""
    if len(parts) == 1:
        return parts[0]
    counts = [part[0] for part in parts]
    count = np.sum(counts, axis=0) if parts else np.zeros(n, dtype=np.int64)
    total = int(count.sum())
    row_start = np.cumsum(count) - count
    before = np.zeros(n, dtype=np.int64)
    P = len(parts[0][3]) if parts else 0
    label, next_globals = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    next_locals = [np.empty(total, dtype=np.int64) for _ in range(P)]
    for part_count, part_label, part_next, part_locals in parts:
        within = np.arange(int(part_count.sum())) - np.repeat(np.cumsum(part_count) - part_count, part_count)
        position = np.repeat(row_start + before, part_count) + within
        label[position], next_globals[position] = part_label, part_next
        for p in range(P):
            next_locals[p][position] = part_locals[p]
        before += part_count
    return count, label, next_globals, next_locals


def whole_part(instance: WholeInstance, engine: Engine, G: np.ndarray, L: list, parts: dict) -> tuple:
    """A whole instance's successors as a part of the rows' controller successors (`merged`)."""
    enabled, next_globals, next_locals = instance.successors(engine, G, L, parts)
    count = enabled.astype(np.int64)
    return count, np.full(int(count.sum()), instance.label_id, dtype=np.int64), next_globals, next_locals


def head_successors(head: list, segment_part: Callable[[int], tuple], engine: Engine, G: np.ndarray,
                    L: list, wholes: dict, parts: dict) -> tuple:
    """The rows' successors by the controller's instances, the whole ones among them, in
    their enumeration order (`merged`); `segment_part(segment)` gives a controller
    segment's part, `wholes` the WholeInstance of each whole label id."""
    pieces = []
    for kind, which in head:
        if kind == "memo":
            pieces.append(segment_part(which))
        else:
            pieces.append(whole_part(wholes[which[0]], engine, G, L, parts))
    if not pieces:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros(len(G), dtype=np.int64), empty, empty, [empty] * len(L)
    return merged(pieces, len(G))
