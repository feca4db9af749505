"""The partitioned search on the vector engine: one worker's share of each level, in numpy. Knows nothing of the protocol.

The coordinator is the packed partitioned search's (parallel.py's
`explore_parallel`, level-synchronous: expand, then admit, batches relayed
by it), and so are its choices: a state's owner (by the fingerprints of its
globals and process 0's locals), its *key* (the XOR of its components'
fingerprints, each process's multiplied by its position's odd factor), the
violation reported (the least key in the first level where an invariant
fails; the least (source key, label) for a transition property), and the
step into a state on a trace (its predecessor of least (key, label) in the
level before). So the distinct states, transitions, depth, verdicts and
traces are those of the packed partitioned search for every N. What differs
is how a partition does its share: a `VectorPartition` expands a level with
the vector engine's tables (vector.py's `Search.successors`), deduplicates by
sorting, keeps its states as sorted key arrays per level, and exchanges
states as arrays.

Component ids are interned lazily and per process, so they mean nothing
across processes. A state travels as P+1 component fingerprints, one uint64
row (`KeyBatch`), as the packed partitioned search's wire does (wire.py):
each batch first defines, by value, the components its receiver has not been
sent yet, and the receiver interns them into its own engine and maps the
fingerprints to its ids with a `searchsorted` over its sorted fingerprints.
No process owns the ids, so no round trip is needed within a level; the
rows do not depend on how a partition packs its keys (one word or several).
With Ray (cluster.py) a batch's array travels through the object store
without pickling each state; over the worker pipes it is pickled as one
buffer.

With liveness a worker keeps the steps out of its states as arrays (a
target sent elsewhere gets its id from its owner's answer to the batch), and
`GatheredExploration` gathers the graph on the coordinator, the states
numbered by (level, key) and each source's edges ordered as the packed
partitions give theirs, and decides on it with vector_liveness.py: the
packed partitions' gathered graph, so their verdicts and lassos.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Callable

import numpy as np

from protocol.engine import Model
from protocol.engine.fast import Engine
from protocol.engine.partitioned.search import ParallelExploration, ProcessPool, WorkerLost, explore_parallel
from protocol.engine.vector.liveness import sorted_unique
from protocol.engine.vector.search import (
    SLICE, KeyLayout, Level, Search, SortedKeys, VectorExploration, WideKeys, run_starts,
)
from protocol.engine.partitioned.wire import ComponentNames


class KeyBatch:
    """The states one partition sends another in one level: the components the receiver
    has not been sent yet (pickled, few), and per state a row of component fingerprints
    (globals, then process 0, 1, ...)."""

    __slots__ = ("definitions", "rows")

    def __init__(self, definitions: bytes, rows: np.ndarray):
        self.definitions, self.rows = definitions, rows

    def __len__(self) -> int:  # the bytes it carries, as the coordinator counts them
        return len(self.definitions) + self.rows.nbytes


def id_type(count: int):
    """The narrowest integer type for ids below `count`."""
    return np.int32 if count < 2**31 else np.int64


def present(columns, size: int) -> np.ndarray:
    """The ids (below `size`) that occur in `columns` (an array or a list of them), in order."""
    seen = np.zeros(size, dtype=bool)
    for column in columns if isinstance(columns, list) else [columns]:
        seen[column] = True
    return np.flatnonzero(seen)


class Steps:
    """A slice of a level's steps as arrays: per step its source's position in the
    slice, its label id, and its target's globals and per-process locals."""

    __slots__ = ("source", "label", "G", "L")

    def __init__(self, source, label, G, L):
        self.source, self.label, self.G, self.L = source, label, G, L

    def __len__(self) -> int:
        return len(self.source)


class Names:
    """numpy views of a partition's `wire.ComponentNames`, rebuilt as components are interned."""

    def __init__(self, names: ComponentNames):
        self.names, self.sizes = names, None

    def current(self) -> "Names":
        names = self.names
        sizes = (len(names.global_fps), len(names.local_fps))
        if sizes != self.sizes:
            self.sizes = sizes
            self.global_fps = np.array(names.global_fps, dtype=np.uint64)
            self.local_fps = np.array(names.local_fps, dtype=np.uint64)
            self.owner_of_global = np.array(names.owner_of_global, dtype=np.int16)
            self.owner_of_local = np.array(names.owner_of_local, dtype=np.int16)
            self.global_keys = np.array(names.global_keys, dtype=np.uint64)
            self.local_keys = [np.array(keys, dtype=np.uint64) for keys in names.local_keys]
            self.global_order = np.argsort(self.global_fps)
            self.local_order = np.argsort(self.local_fps)
        return self

    def owner(self, G: np.ndarray, L0: np.ndarray, count: int) -> np.ndarray:
        owner = self.owner_of_global[G] + self.owner_of_local[L0]  # each less than count: no division
        owner[owner >= count] -= count
        return owner

    def key(self, G: np.ndarray, L: list) -> np.ndarray:
        """The packed partitioned search's key of each state (wire.ComponentNames.compile_key)."""
        key = self.global_keys[G]
        for p, column in enumerate(L):
            key = key ^ self.local_keys[p][column]
        return key

    def ids(self, fps: np.ndarray, local: bool) -> np.ndarray:
        """The ids here of components named by fingerprints (every one interned here)."""
        known, order = (self.local_fps, self.local_order) if local else (self.global_fps, self.global_order)
        return order[np.searchsorted(known, fps, sorter=order)]


class VectorPartition:
    """One worker's share of the partitioned vector search: the states it owns, as sorted
    key arrays per level; the methods `explore_parallel` calls on a partition."""

    def __init__(self, model_factory: Callable[[], Model], index: int, count: int, record_edges: bool):
        self.model = model_factory()
        self.engine = Engine(self.model)
        self.me, self.count, self.P = index, count, self.model.processes
        self.run = VectorExploration(self.engine)  # what the vector search's helpers read: violations, parts
        self.search = Search(self.run, self.engine, None, False, False, None, time.perf_counter())
        self.names = ComponentNames(self.engine, count)  # fingerprints, owners, keys (wire.py)
        self.arrays = Names(self.names)
        self.stored: list[Level] = self.run.levels  # level k (from 0): its states' keys, sorted, under its layout
        self.layout = KeyLayout.fitting(self.P, len(self.engine.globals), len(self.engine.locals))
        self.seen: SortedKeys | None = None  # the keys of every state admitted here, under `seen_layout`
        self.seen_layout = self.layout
        self.own: list = []  # the successors owned here found by `expand`: [(sorted keys, layout)]
        # With edges (liveness): per level, each step from a state here as (source id, label,
        # owner of the target, target's id there), by source in enumeration order; and
        # while a level is exchanged, its steps' target keys and the keys sent to each owner.
        self.record_edges = record_edges
        self.edge_levels: list = []
        self.pending = None
        self.sent: list = [None] * count

    # ------------------------------------------------------------ keys

    def fitting(self) -> KeyLayout:
        """A layout wide enough for every component interned so far (never narrower)."""
        engine = self.engine
        self.layout = KeyLayout.fitting(self.P, len(engine.globals), len(engine.locals), at_least=self.layout)
        return self.layout

    def joined(self, pieces: list) -> np.ndarray:
        """The distinct keys of `pieces` [(keys, layout)], under the current layout."""
        layout = self.fitting()
        if not pieces:
            return np.zeros(0, dtype=np.uint64)
        return sorted_unique(np.concatenate([piece_layout.rekey(keys, layout) for keys, piece_layout in pieces]))

    def retire(self, names) -> None:
        self.run.violations.update(dict.fromkeys(names, True))  # what `Search.woken` skips

    # ------------------------------------------------------------ the search

    def start(self) -> dict:
        """Admit the initial states this partition owns: level 1."""
        engine = self.engine
        packed = [engine.unpack(engine.encode(state)) for state in self.model.initial_states]
        G = np.array([g for g, _ in packed], dtype=np.int64)
        L = [np.array([lids[p] for _, lids in packed], dtype=np.int64) for p in range(self.P)]
        mine = self.arrays.current().owner(G, L[0], self.count) == self.me
        keys = self.fitting().encode(G[mine], [column[mine] for column in L])
        empty_ids = np.zeros(0, dtype=np.int64) if self.record_edges else None
        self.seen, self.seen_layout = SortedKeys(np.zeros(0, dtype=np.uint64), empty_ids), self.layout
        self.own = [(sorted_unique(keys), self.layout)]
        return self.admit([None] * self.count)

    def steps(self, level: Level, start: int, stop: int) -> Steps:
        """The steps of states start..stop of `level`, through the vector engine's tables."""
        part = Level(level.offset + start, level.keys[start:stop], level.layout)
        G, L, (count, c_label, c_next, c_locals), blocks = self.search.successors(part)
        sources, labels, Gs, Ls = [np.repeat(np.arange(len(G)), count)], [c_label], [c_next], [[c] for c in c_locals]
        for label_id, p, enabled, found, wide in blocks:
            rows = np.flatnonzero(enabled)
            sources.append(rows)
            labels.append(np.full(len(rows), label_id, dtype=np.int64))
            if wide is not None:
                Gs.append(wide[0])
                for q in range(self.P):
                    Ls[q].append(wide[1][q])
            else:
                Gs.append(G[rows])
                for q in range(self.P):
                    Ls[q].append(found[rows] if q == p else L[q][rows])
        return Steps(np.concatenate(sources) + start, np.concatenate(labels), np.concatenate(Gs),
                     [np.concatenate(column) for column in Ls])

    def successor_keys(self, level: Level, start: int, stop: int) -> list:
        """The successors of states start..stop of `level`, block by block as the vector
        engine lays them out: [(keys under the current layout, each one's owner, or None
        where all are owned here, with edges their sources' ids, and their label id or
        ids)]. A local step of a process other than 0 keeps the
        globals and process 0's locals, so its successor stays here; its key is the
        parent's with that process's bits flipped."""
        part = Level(level.offset + start, level.keys[start:stop], level.layout)
        G, L, (count, c_label, c_next, c_locals), blocks = self.search.successors(part)
        layout, arrays = self.fitting(), self.arrays.current()
        parent_keys = part.layout.rekey(part.keys, layout)
        sources = (lambda rows: rows + part.offset) if self.record_edges else (lambda rows: None)
        out = [(layout.encode(c_next, c_locals), arrays.owner(c_next, c_locals[0], self.count),
                sources(np.repeat(np.arange(len(G)), count)), c_label)]
        for label_id, p, enabled, found, wide in blocks:
            rows = sources(np.flatnonzero(enabled))
            if wide is not None:
                out.append((layout.encode(*wide), arrays.owner(wide[0], wide[1][0], self.count), rows, label_id))
                continue
            moved = (L[p] ^ found).astype(np.uint64) << layout.shifts[p]
            keys = (parent_keys ^ moved)[enabled]
            out.append((keys, None if p else arrays.owner(G[enabled], found[enabled], self.count), rows, label_id))
        return out

    def expand(self) -> tuple[list, int, dict]:
        """Expand this partition's frontier, a slice at a time: per owner, the batch of
        successors it is sent (None for this partition's own, kept for `admit`), the
        transitions, and each woken transition property's least violation in this
        level by (source key, label)."""
        level = self.stored[-1]
        outgoing: list = [[] for _ in range(self.count)]  # per owner: [(keys, layout)], this one's included
        transitions, step_violations = 0, {}
        edges: list = []  # with edges: [(keys, layout, owner, source, label)] per block
        for start in range(0, len(level), SLICE):
            stop = min(start + SLICE, len(level))
            for keys, owner, source, label in self.successor_keys(level, start, stop):
                transitions += len(keys)
                if self.record_edges:
                    edges.append((keys, self.layout, owner, source, label))
                if owner is None or self.count == 1:
                    outgoing[self.me].append((keys, self.layout))
                    continue
                for destination in range(self.count):
                    outgoing[destination].append((keys[owner == destination], self.layout))
            if self.search.woken(self.search.step_checks):
                self.check_steps(level, self.steps(level, start, stop), step_violations)
        self.own = [(self.joined(outgoing[self.me]), self.layout)]
        self.sent = [None if owner == self.me else self.joined(pieces) for owner, pieces in enumerate(outgoing)]
        if self.record_edges:
            self.pending = self.steps_made(edges)
        batches = [None if keys is None else self.batch(owner, keys) for owner, keys in enumerate(self.sent)]
        return batches, transitions, step_violations

    def steps_made(self, blocks: list) -> tuple:
        """A level's steps, [(keys, layout, owner, source, label)] per block, as arrays by
        source in enumeration order (a source's controller steps, then each process
        action's, as the blocks come): [source, label, owner, target key, its layout,
        target id (None until `resolve`)]."""
        layout = self.fitting()
        keys = np.concatenate([np.zeros(0, np.uint64)] + [lay.rekey(k, layout) for k, lay, *_ in blocks])
        owner = np.concatenate([np.zeros(0, np.int16)] + [np.full(len(k), self.me, np.int16) if o is None
                                                          else o.astype(np.int16) for k, _, o, _, _ in blocks])
        source = np.concatenate([np.zeros(0, np.int64)] + [block[3] for block in blocks])
        label = np.concatenate([np.zeros(0, np.int32)] + [np.full(len(k), lab, np.int32) if np.isscalar(lab)
                                                          else lab.astype(np.int32) for k, _, _, _, lab in blocks])
        order = np.argsort(source, kind="stable")
        return [source[order], label[order], owner[order], keys[order], layout, None]

    def batch(self, owner: int, keys: np.ndarray) -> KeyBatch:
        """The batch of states `keys` (under the current layout) for partition `owner`."""
        import pickle

        engine, arrays = self.engine, self.arrays.current()
        G, L = self.layout.decode(keys)
        sent_globals, sent_locals = self.names.defined[owner]
        new_globals = set(present(G, len(engine.globals)).tolist()) - sent_globals
        new_locals = set(present(L, len(engine.locals)).tolist()) - sent_locals
        sent_globals.update(new_globals)
        sent_locals.update(new_locals)
        definitions = pickle.dumps(
            (sorted((self.names.global_fps[g], engine.globals[g]) for g in new_globals),
             sorted((self.names.local_fps[lid], engine.locals[lid]) for lid in new_locals)),
            protocol=pickle.HIGHEST_PROTOCOL)
        rows = np.stack([arrays.global_fps[G], *(arrays.local_fps[column] for column in L)], axis=1)
        return KeyBatch(definitions, rows)

    def received(self, batch: KeyBatch) -> tuple[np.ndarray, KeyLayout]:
        """A peer's batch as keys here (interning the components it defines first)."""
        self.names.learn(batch.definitions)
        arrays = self.arrays.current()
        G = arrays.ids(batch.rows[:, 0], local=False)
        L = [arrays.ids(batch.rows[:, 1 + p], local=True) for p in range(self.P)]
        layout = self.fitting()
        return layout.encode(G, L), layout

    def admit(self, incoming: list) -> dict:
        """Admit the successors sent here (one batch per sender, None for none) and those
        found here: the level's new states. Returns their count, each invariant's least
        violating (key, worker, id) among them, and no edge answers (no edges kept)."""
        received = [None if batch is None else self.received(batch) for batch in incoming]
        keys = self.joined(self.own + [piece for piece in received if piece is not None])
        if not self.seen_layout.same(self.layout):  # the components interned since: wider keys
            self.seen.rekey(self.seen_layout, self.layout)
            self.seen_layout = self.layout
        known, _ = self.seen.find(keys)
        fresh = keys[~known]
        offset = self.run.distinct_states
        if len(fresh):
            self.seen.add(fresh, offset + np.arange(len(fresh)) if self.record_edges else None)
        self.stored.append(Level(offset, fresh, self.layout))
        self.own = []
        answers = [None] * self.count
        if self.record_edges:  # each sender's batch rows' ids here, in its order; this level's own targets
            answers = [None if piece is None else self.ids_of(*piece) for piece in received]
            self.resolve([None] * self.count)
        return {"new": len(fresh), "violations": self.check_states(self.stored[-1]), "answers": answers}

    def ids_of(self, keys: np.ndarray, layout: KeyLayout) -> np.ndarray:
        """The ids here of states seen, by their keys under `layout`."""
        return self.seen.find(layout.rekey(keys, self.seen_layout))[1]

    def resolve(self, answers: list) -> None:
        """The ids of the targets of the level's steps: those owned here once admitted
        (`admit`), those sent elsewhere from their owners' answers (one id per row of
        the batch sent them, in its order). The level's edges are complete when both
        are in."""
        if self.pending is None:
            return
        source, label, owner, keys, layout, target = self.pending
        if target is None:  # first, from `admit`: the targets owned here
            target = self.pending[5] = np.full(len(source), -1, dtype=np.int64)
            mine = owner == self.me
            target[mine] = self.ids_of(keys[mine], layout)
            if not mine.all():
                return  # the rest when the owners answer
        for other, ids in enumerate(answers):
            if ids is not None and other != self.me:
                theirs = owner == other
                target[theirs] = ids[np.searchsorted(self.sent[other], keys[theirs])]
        label_type = np.int16 if len(self.run.labels) < 2**15 else np.int32
        self.edge_levels.append((source.astype(id_type(self.run.distinct_states)), label.astype(label_type),
                                 owner.astype(np.int8), target.astype(id_type(int(target.max(initial=0)) + 1))))
        self.pending = None

    # ------------------------------------------------------------ properties

    def check_states(self, level: Level) -> dict:
        """Each active invariant's least violating state of `level`, by key."""
        search, found = self.search, {}
        if not len(level):
            return found
        G, L = level.layout.decode(level.keys)
        keys = self.arrays.current().key(G, L)
        failing = {}
        for name, holds in search.by_pair.items():
            if name not in self.run.violations:
                ok = search.pairs_hold(name, holds, level.keys, level.layout)  # None: holds in every state
                if ok is not None:
                    failing[name] = ~ok
        readable = search.woken(search.state_checks)
        if readable:
            states = list(self.run.level_states(level))
            for name, holds in readable:
                failing[name] = np.array([not holds(state) for state in states], dtype=bool)
        for name, mask in failing.items():
            where = np.flatnonzero(mask)
            if len(where):
                least = where[np.argmin(keys[where])]
                found[name] = (int(keys[least]), self.me, level.offset + int(least))
        return found

    def check_steps(self, level: Level, steps: Steps, step_violations: dict) -> None:
        """Each woken transition property's least failing step by (source key, label),
        among `steps` and what `step_violations` holds already."""
        checks = self.search.woken(self.search.step_checks)
        if not checks or not len(steps):
            return
        G, L = level.layout.decode(level.keys)
        arrays = self.arrays.current()
        source_keys = arrays.key(G, L)[steps.source]
        order = np.lexsort((steps.label, source_keys))  # the least (source key, label) first
        readable = self.run.readable_state
        target_keys = self.layout.encode(steps.G, steps.L)
        for name, holds in checks:
            for i in order.tolist():
                source = int(steps.source[i])
                before = readable(int(level.keys[source]), level.layout)
                after = readable(int(target_keys[i]), self.layout)
                if not holds(before, after):
                    candidate = (int(source_keys[i]), int(steps.label[i]), self.me, level.offset + source, after)
                    if name not in step_violations or candidate[:2] < step_violations[name][:2]:
                        step_violations[name] = candidate
                    break

    # ------------------------------------------------------------ traces and results

    def level_of(self, state_id: int) -> int:
        """The level (from 1) of one of this partition's states."""
        level, _ = self.run.locate(state_id)
        return self.stored.index(level) + 1

    def readable(self, state_id: int):
        return self.run.state(state_id)

    def predecessor(self, target, level: int):
        """Among this partition's states at `level`, the least (key, label) with a step to
        the readable state `target`: (key, label id, id, readable state), or None."""
        if level > len(self.stored) or not len(self.stored[level - 1]):
            return None
        states = self.stored[level - 1]
        g, lids = self.engine.unpack(self.engine.encode(target))
        G, L = states.layout.decode(states.keys)
        state_keys, best = self.arrays.current().key(G, L), None
        for start in range(0, len(states), SLICE):
            steps = self.steps(states, start, min(start + SLICE, len(states)))
            hits = steps.G == g
            for p in range(self.P):
                hits &= steps.L[p] == lids[p]
            where = np.flatnonzero(hits)
            if not len(where):
                continue
            keys = state_keys[steps.source[where]]
            first = np.lexsort((steps.label[where], keys))[0]
            candidate = (int(keys[first]), int(steps.label[where][first]), int(steps.source[where][first]))
            if best is None or candidate[:2] < best[:2]:
                best = candidate
        if best is None:
            return None
        return (best[0], best[1], states.offset + best[2], self.readable(states.offset + best[2]))

    def size(self) -> int:
        return self.run.distinct_states

    def first_reached(self, predicates: dict) -> dict:
        """Per named state predicate, the first level (from 1) where one of this partition's
        states satisfies it, or None."""
        return self.run.first_reached(predicates)

    # ------------------------------------------------------------ liveness: the graph gathered

    def initial_ids(self) -> list[int]:
        return list(range(len(self.stored[0])))

    def levels_in_key_order(self) -> np.ndarray:
        """This partition's ids in (level, key) order, the order of the global numbering."""
        arrays, parts = self.arrays.current(), []
        for level in self.stored:
            G, L = level.layout.decode(level.keys)
            parts.append(level.offset + np.argsort(arrays.key(G, L), kind="stable"))
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def levels(self) -> tuple[bytes, list[int], bytes]:
        """This partition's ids in (level, key) order, with their keys, and where each
        level starts (`Partition.levels`)."""
        self.sorted_ids = order = self.levels_in_key_order()
        G, L = self.decoded(order)
        keys = self.arrays.current().key(G, L)
        return keys.astype(np.uint64).tobytes(), [level.offset for level in self.stored], order.tobytes()

    def decoded(self, ids: np.ndarray) -> tuple[np.ndarray, list]:
        """The component ids of the states `ids`."""
        G, L = self.run.components()
        return G[ids], [column[ids] for column in L]

    def edges(self, global_ids: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The edges in global ids (`global_ids[w]`: worker w's local -> global ids, raw
        int64s): per state in the order of the global numbering its out-degree, then the
        edges' labels and targets, a source's edges in enumeration order where they all
        go to one owner, else by (label, target), as the packed partitions give them.
        A level at a time (the global numbering keeps the levels in order), each
        level's edges let go of once given."""
        maps = [np.frombuffer(raw, dtype=np.int64) for raw in global_ids]
        n = self.size()
        rank = np.empty(n, dtype=np.int64)
        rank[self.sorted_ids] = np.arange(n)
        degrees, labels, targets = np.zeros(n, dtype=np.int64), [], []
        while self.edge_levels:
            source, label, owner, target = self.edge_levels.pop(0)
            to = np.empty(len(target), dtype=np.int64)
            for other, ids in enumerate(maps):
                theirs = owner == other
                to[theirs] = ids[target[theirs]]
            starts = np.flatnonzero(np.r_[True, source[1:] != source[:-1]]) if len(source) else source
            several = np.repeat(np.minimum.reduceat(owner, starts) != np.maximum.reduceat(owner, starts),
                                np.diff(np.append(starts, len(source)))) if len(source) else source
            order = np.lexsort((np.where(several, to, np.arange(len(to))), np.where(several, label, 0), rank[source]))
            degrees += np.bincount(rank[source], minlength=n)
            labels.append(label[order].astype(np.int32))
            targets.append(to[order])
        return degrees, np.concatenate(labels or [np.zeros(0, np.int32)]), np.concatenate(targets or [np.zeros(0, np.int64)])

    def packed_states(self, ids: np.ndarray) -> list:
        """The packed engine's ints for the states `ids` (what its liveness helpers read)."""
        G, L = self.decoded(ids)
        pack = self.engine.pack
        return [pack(g, list(lids)) for g, *lids in zip(G.tolist(), *(column.tolist() for column in L))]

    def premises_reached(self, pairs_of: Callable, which: list) -> list[bool]:
        """Per pair numbered in `which`, whether its premise holds in one of this partition's states."""
        from protocol.engine.fast import premises_reached

        pairs = [pairs_of(self.model)[i] for i in which]
        states = self.packed_states(np.arange(self.size()))
        return list(premises_reached(self.engine, states, pairs, [(b"", b"")] * len(pairs)))

    def vector_masks(self, pairs_of: Callable) -> list:
        """Per leads-to pair, (triggers, unmet) over this partition's states by id, as
        boolean arrays (`vector_liveness.leads_to_masks`)."""
        from protocol.engine.vector.liveness import leads_to_masks

        return leads_to_masks(self.run, pairs_of(self.model))[0]

    def memory(self) -> int:
        """This worker's peak resident memory in bytes."""
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class GatheredExploration(ParallelExploration):
    """The run of the vector partitions: liveness decided on the graph gathered on the
    coordinator, as arrays, by the vector engine's liveness (vector_liveness.py). The
    states are numbered by (level, key) and each source's edges ordered as the packed
    partitions gather theirs, so the graph, the verdicts and the lassos are theirs."""

    def holds_in_place(self, name: str, pairs) -> None:
        return None  # the partitions keep their edges as arrays, not the rows decided on in place

    def number_globally(self) -> None:
        """Every state by (level, key), merged from the partitions (each gives its ids in
        that order): `owner_of[gid]`, `local_of[gid]`, each worker's local -> global ids."""
        parts = self.pool.call("levels", [()] * len(self.sizes))
        columns = []
        for worker, (raw_keys, bounds, raw_ids) in enumerate(parts):
            keys, ids = np.frombuffer(raw_keys, dtype=np.uint64), np.frombuffer(raw_ids, dtype=np.int64)
            level = np.repeat(np.arange(len(bounds)), np.diff(np.append(bounds, len(keys))))
            columns.append((level, keys, np.full(len(keys), worker, dtype=np.int8), ids))
        level, keys, owner, local = (np.concatenate(column) for column in zip(*columns))
        order = np.lexsort((local, owner, keys, level))
        self.owner_of, self.local_of = owner[order], local[order]
        self.global_ids = [np.empty(len(raw_ids) // 8, dtype=np.int64) for _, _, raw_ids in parts]
        for worker, ids in enumerate(self.global_ids):
            mine = np.flatnonzero(self.owner_of == worker)
            ids[self.local_of[mine]] = mine

    def locate(self, state_id: int) -> tuple[int, int]:
        return int(self.owner_of[state_id]), int(self.local_of[state_id])

    def initial_ids(self) -> list[int]:
        return [int(state_id) for state_id in super().initial_ids()]

    def gather_edges(self) -> None:
        """The partitions' edges in global ids, as compressed rows in global id order."""
        self.number_globally()
        answers = self.pool.call("edges", [([ids.tobytes() for ids in self.global_ids],)] * len(self.sizes))
        n = len(self.owner_of)
        degree = np.zeros(n, dtype=np.int64)
        mine = [np.flatnonzero(self.owner_of == worker) for worker in range(len(self.sizes))]
        for ids, (raw_degrees, _labels, _targets) in zip(mine, answers):
            degree[ids] = raw_degrees
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(degree, out=offsets[1:])
        labels, targets = np.empty(offsets[-1], dtype=np.int32), np.empty(offsets[-1], dtype=np.int64)
        for ids, (_degrees, raw_labels, raw_targets) in zip(mine, answers):
            counts = degree[ids]
            at = np.repeat(offsets[ids] - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()))
            labels[at] = raw_labels
            targets[at] = raw_targets
        self.offsets, self.edge_label, self.edge_dst = offsets, labels, targets
        self.gathered = True

    def fair_graph(self, model: Model):
        from protocol.engine.vector.liveness import VectorGraph

        self.gather_edges()
        family_of = {instance.label: instance.family for instance in model.instances}
        return VectorGraph(self.offsets, self.edge_label, self.edge_dst, model.fair_families,
                           [family_of.get(label) for label in self.labels])

    def find_violation(self, graph, initial, masks, name: str, pairs):
        return graph.find_violation(initial, masks)

    def pair_masks(self, name: str, pairs) -> list:
        """Per leads-to pair, (triggers, unmet) over the global ids, computed by the
        partitions on their arrays and placed here by the global numbering."""
        from protocol.engine.partitioned.search import liveness_pairs

        per_worker = self.pool.call("vector_masks", [(partial(liveness_pairs, name),)] * len(self.sizes))
        masks = []
        for pair in range(len(pairs)):
            both = (np.zeros(len(self.owner_of), dtype=bool), np.zeros(len(self.owner_of), dtype=bool))
            for ids, found in zip(self.global_ids, per_worker):
                for mask, part in zip(both, found[pair]):
                    mask[ids] = part
            masks.append(both)
        return masks

    def premises_reached(self, name: str, pairs, masks) -> tuple:
        return self._premises(name, [bool(triggers.any()) for triggers, _ in masks])


def explore_vector_parallel(model_factory: Callable[[], Model], workers: int, *, pool=None, **options):
    """`parallel.explore_parallel` with `VectorPartition`s (forked worker processes unless
    `pool` gives others, e.g. Ray actors built of `VectorPartition`): the same counts,
    verdicts, traces and lassos as the packed partitions, for any N. Liveness is decided
    on the graph gathered on the coordinator."""
    try:
        if pool is None:
            pool = ProcessPool(model_factory, workers, options.get("record_edges", False), kind=VectorPartition)
        run = explore_parallel(model_factory, workers, pool=pool, run_type=GatheredExploration, **options)
    except WorkerLost as lost:
        if isinstance(lost.error, WideKeys):  # a worker's keys outgrew its words: a refusal, not a fault
            raise lost.error from None
        raise
    run.engine_choice = {"name": "vector"}
    return run

