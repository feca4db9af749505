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

Its fairness needs nothing more: the liveness reads which families are enabled
in a state from the labels of the steps out of it, a whole instance's among them.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from protocol.engine.fast import Engine


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
