"""Shared-nothing parallel breadth-first search over a `Model`. Knows nothing of the protocol.

States are hash-partitioned: each `Partition` (a worker process, or a Ray
actor) owns the states whose key falls to it, keeps their seen-set and their
parents, expands its share of each breadth-first level with the packed
engine (engine/fast.py) and sends every successor it does not own to its
owner, in one batch of raw bytes per owner and level. The search is
level-synchronous: the coordinator (`explore_parallel`) runs one level at a
time, expand then admit, and relays the batches.

Canonical encoding. The packed engine interns components per process, so a
packed int means nothing elsewhere. Every component (the globals, one
process's locals) is named across processes by a 64-bit fingerprint of its
canonical bytes (`canonical`: a deterministic encoding; sets sorted). A
state on the wire is its P+1 component fingerprints; a batch first defines
the components its receiver has not been sent yet, and a receiver that meets
two components with one fingerprint stops loudly, so the exchange is exact,
never probabilistic. A state's *key* XORs its component fingerprints (each
process's multiplied by its position's odd factor) into 64 bits; keys order
states deterministically. Its owner is the same XOR over its globals and
process 0's locals only, mod N: a step of another process leaves the state
with its owner, so only steps of the controller and of process 0 cross.

Determinism, whatever N: each level's new states are numbered in key order,
so each partition expands its share in key order; a new state's parent is
the least (parent key, label id) among the steps into it in that level; the
violation reported is the least key among the violating states of the first
level where a property fails. So counts, depth, verdicts, shortest lengths
and the traces are the same for every N >= 2 (with N = 1 the caller uses the
sequential search: same counts and lengths, its own choice of trace).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import signal
import time
import traceback
from array import array
from itertools import repeat
from typing import Callable

from . import Model
from .checker import Guarded
from .fast import BITS, MASK, Engine

MASK64 = (1 << 64) - 1


class WorkerLost(RuntimeError):
    """A worker died (killed, out of memory) or failed: the run has no verdict."""


class ComponentCollision(RuntimeError):
    """Two distinct components share a 64-bit fingerprint (never seen; stop rather than merge them)."""


def canonical(value) -> bytes:
    """Bytes that mean `value` in every process: sets sorted, tuples in order."""
    if value is None:
        return b"N"
    if value is True or value is False:
        return b"T" if value else b"F"
    if isinstance(value, int):
        return b"i%d;" % value
    if isinstance(value, str):
        data = value.encode()
        return b"s%d:" % len(data) + data
    if isinstance(value, tuple):
        return b"(" + b"".join(map(canonical, value)) + b")"
    if isinstance(value, frozenset | set):
        return b"{" + b"".join(sorted(map(canonical, value))) + b"}"
    raise TypeError(f"no canonical encoding for a {type(value).__name__}: components must be "
                    "built of None, bool, int, str, tuple and frozenset")


def fingerprint(value) -> int:
    return int.from_bytes(hashlib.blake2b(canonical(value), digest_size=8).digest(), "little")


class Partition:
    """One worker's share of the search: the states whose key % count == index."""

    def __init__(self, model_factory: Callable[[], Model], index: int, count: int, record_edges: bool):
        self.model = model_factory()
        self.engine = Engine(self.model)
        self.me, self.count, self.record_edges = index, count, record_edges
        self.P = self.model.processes
        self.index: dict = {}  # packed state -> local id
        self.states: list = []  # local id -> packed state
        self.keys = array("Q")  # local id -> key
        self.parent_worker = array("b")  # -1 for an initial state
        self.parent_id = array("q")
        self.via = array("i")  # label id of the step in, -1 for an initial state
        self.frontier = range(0)
        self.level_starts: list[int] = []  # the first id of each level this partition has states in
        self.candidates: dict = {}  # packed -> [key, parent key, label, parent worker, parent id]
        # Component fingerprints: per interned id, and back (per kind).
        self.global_fps: list[int] = []
        self.local_fps: list[int] = []
        self.fp_global: dict = {}
        self.fp_local: dict = {}
        self.global_keys: list[int] = []  # what each component adds to a state's key
        self.local_keys: list[list[int]] = [[] for _ in range(self.P)]
        self._follow_interning()
        self.defined = [(set(), set()) for _ in range(count)]  # what each peer has been sent
        self._expand_loop = self._compile_expand()
        self.key = self._compile_key()
        self._checks()
        # Edges (with record_edges): final ones, and those waiting for their target's id.
        self.edge_src, self.edge_label = array("q"), array("i")
        self.edge_worker, self.edge_dst = array("b"), array("q")
        # Every edge is recorded when its source is expanded, in the engine's order (so the
        # rows do not depend on N); a target not yet numbered is filled in later.
        self.waiting_own: list = []  # (edge index, packed target)
        self.waiting: list = [[] for _ in range(count)]  # per owner: (edge index, slot in its batch)
        self.sent_order: list = [None] * count  # per owner: packed targets in batch order

    # ------------------------------------------------------------ encoding

    def _compile_key(self):
        """key(packed): the XOR of its components' keys (each process's locals weighted by
        a position's own odd factor, so swapping two processes changes it), unrolled."""
        P = self.P
        terms = [f"gk[s >> {P * BITS}]"] + [f"lk{p}[(s >> {p * BITS}) & {MASK}]" for p in range(P)]
        namespace = {"gk": self.global_keys, **{f"lk{p}": keys for p, keys in enumerate(self.local_keys)}}
        exec(f"def key(s):\n    return {' ^ '.join(terms)}\n", namespace)
        return namespace["key"]

    def _follow_interning(self) -> None:
        """Fingerprint each component as the engine interns it, so that the tables the
        hot loop reads are never behind (the engine's methods, wrapped on the instance)."""
        engine = self.engine
        for name, fps in (("intern_global", self.global_fps), ("intern_local", self.local_fps)):
            interning = getattr(engine, name)

            def follow(value, interning=interning, fps=fps):
                found = interning(value)
                if found >= len(fps):  # new: fingerprint it now
                    self._catch_up()
                return found

            setattr(engine, name, follow)

    def _catch_up(self) -> None:
        """Fingerprint the components the engine interned since last time."""
        engine = self.engine
        for values, fps, back in ((engine.globals, self.global_fps, self.fp_global),
                                  (engine.locals, self.local_fps, self.fp_local)):
            for component_id in range(len(fps), len(values)):
                fp = fingerprint(values[component_id])
                other = back.get(fp)
                if other is not None and values[other] != values[component_id]:
                    raise ComponentCollision(f"components {values[other]} and {values[component_id]} "
                                             "share a fingerprint")
                back[fp] = component_id
                fps.append(fp)
                if fps is self.global_fps:
                    self.global_keys.append(fp)
                else:
                    for p, keys in enumerate(self.local_keys):
                        keys.append((fp * (2 * p + 3)) & MASK64)

    def _learn(self, definitions: bytes) -> None:
        """Intern the components a peer defined, refusing a fingerprint that names two."""
        globals_, locals_ = pickle.loads(definitions)
        engine = self.engine
        for pairs, back, intern, values in ((globals_, self.fp_global, engine.intern_global, engine.globals),
                                            (locals_, self.fp_local, engine.intern_local, engine.locals)):
            for fp, value in pairs:
                if fp not in back:
                    intern(value)
                    self._catch_up()  # raises if the value's fingerprint names another component
                if back.get(fp) is None or values[back[fp]] != value or fingerprint(value) != fp:
                    raise ComponentCollision(f"component {value} arrived under a fingerprint not its own")

    # ------------------------------------------------------------ properties

    def _checks(self) -> None:
        engine = self.engine
        self.invariants = [(name, engine.invariant(name)) for name in engine.readable_invariants]
        self.steps = [(name, engine.transition_property(name)) for name in engine.readable_transitions]
        self.violated: set = set()  # what already has its shortest violation: not checked again

    def _active(self, props: list) -> list:
        """The properties to check right now: not yet violated, and (for a guarded one)
        some component has failed it."""
        return [(name, prop.holds if isinstance(prop, Guarded) else prop) for name, prop in props
                if name not in self.violated and (not isinstance(prop, Guarded) or prop.watch)]

    def retire(self, names) -> None:
        self.violated.update(names)

    # ------------------------------------------------------------ the search

    def owner(self, packed: int) -> int:
        """The partition that owns a state: by its globals and process 0's locals only,
        so that a step of another process keeps the state where it is (no exchange)."""
        return (self.global_keys[packed >> (self.P * BITS)] ^ self.local_keys[0][packed & MASK]) % self.count

    def start(self) -> dict:
        """Admit the initial states this partition owns: level 1."""
        self._catch_up()
        for state in self.model.initial_states:
            packed = self.engine.encode(state)
            self._catch_up()
            if self.owner(packed) == self.me and packed not in self.candidates:
                self.candidates[packed] = (0, -1, -1, -1)
        return self.admit([None] * self.count)

    def expand(self) -> tuple[list, int, dict]:
        """Expand this partition's frontier: per owner, the batch of successors it is sent
        (None for this partition's own, kept here), the transitions, and the least
        violation of each transition property in this level (parent key, label, ...)."""
        outgoing = [dict() for _ in range(self.count)]  # owner -> packed -> (parent key, label, parent id, slot)
        step_violations: dict = {}
        transitions = self._expand_loop(self.frontier, outgoing, step_violations)
        self._catch_up()
        return [None if owner == self.me else self._batch(owner, outgoing[owner]) for owner in range(self.count)], \
            transitions, step_violations

    def _compile_expand(self):
        """The hot loop of `expand`, its owner test inline (no call per successor), with or
        without recording edges."""
        P, record = self.P, self.record_edges
        owner = f"(gk[after >> {P * BITS}] ^ lk0[after & {MASK}]) % count"
        lines = [
            "def expand_loop(self, frontier, outgoing, step_violations):",
            "    successors, index, candidates = self.engine.successors, self.index, self.candidates",
            "    states, keys, me, count, engine = self.states, self.keys, self.me, self.count, self.engine",
            "    edge, waiting_own, waiting = self._edge, self.waiting_own, self.waiting",
            "    edge_dst = self.edge_dst",
            "    steps = self._active(self.steps)",
            "    dormant = [prop.watch for name, prop in self.steps if isinstance(prop, Guarded)]",
            "    transitions = 0",
            "    gk, lk0 = self.global_keys, self.local_keys[0]",
            "    for source in frontier:",
            "        found = successors(states[source])",
            "        transitions += len(found)",
            "        parent_key = keys[source]",
        ]
        lines += ["        if dormant and any(dormant):",
                  "            steps = self._active(self.steps)",
                  "        if steps:",
                  "            for label, after in found:",
                  "                self._check_step(steps, step_violations, source, label, after, parent_key)"]
        lines += [
            "        for label, after in found:",
            f"            owner = {owner}",
            "            if owner == me:",
            "                target = index.get(after)",
            "                if target is not None:",
            *(["                    edge(source, label, me, target)"] if record else []),
            "                    continue",
            "                if after not in candidates:  # expanded in key order: the first step in is the least",
            "                    candidates[after] = (parent_key, label, me, source)",
            *(["                waiting_own.append((len(edge_dst), after))",
               "                edge(source, label, me, -1)"] if record else []),
            "            else:",
            "                batch = outgoing[owner]",
            "                entry = batch.get(after)",
            "                if entry is None:",
            "                    entry = batch[after] = (parent_key, label, source, len(batch))",
            *(["                waiting[owner].append((len(edge_dst), entry[3]))",
               "                edge(source, label, owner, -1)"] if record else []),
            "    return transitions",
        ]
        namespace = {"Guarded": Guarded}
        exec("\n".join(lines), namespace)
        return namespace["expand_loop"].__get__(self)

    def _check_step(self, steps, step_violations, source, label, after, parent_key) -> None:
        for name, holds in steps:
            if name not in step_violations and not holds(self.states[source], after):
                step_violations[name] = (parent_key, label, self.me, source, self.engine.decode(after))

    def _edge(self, source: int, label: int, worker: int, target: int) -> None:
        self.edge_src.append(source)
        self.edge_label.append(label)
        self.edge_worker.append(worker)
        self.edge_dst.append(target)

    def _batch(self, owner: int, entries: dict) -> bytes:
        """One owner's batch: the components it has not been sent, pickled (few), then
        per state its record (component fingerprints), parent key and
        (label << 32 | parent id), as raw uint64s."""
        sent_globals, sent_locals = self.defined[owner]
        engine, shift, P = self.engine, self.P * BITS, self.P
        global_fps, local_fps = self.global_fps, self.local_fps
        new_globals = [(global_fps[g], engine.globals[g]) for g in {packed >> shift for packed in entries}
                       if global_fps[g] not in sent_globals]
        used = {(packed >> (p * BITS)) & MASK for packed in entries for p in range(P)}
        new_locals = [(local_fps[lid], engine.locals[lid]) for lid in used if local_fps[lid] not in sent_locals]
        sent_globals.update(fp for fp, _ in new_globals)
        sent_locals.update(fp for fp, _ in new_locals)
        width = P + 3
        flat = array("Q", bytes(8 * width * len(entries)))
        packed_states = list(entries)
        flat[0::width] = array("Q", [global_fps[packed >> shift] for packed in packed_states])
        for p in range(P):
            flat[1 + p::width] = array("Q", [local_fps[(packed >> (p * BITS)) & MASK] for packed in packed_states])
        values = entries.values()
        flat[P + 1::width] = array("Q", [parent_key for parent_key, _, _, _ in values])
        flat[P + 2::width] = array("Q", [(label << 32) | parent for _, label, parent, _ in values])
        definitions = pickle.dumps((sorted(new_globals), sorted(new_locals)), protocol=pickle.HIGHEST_PROTOCOL)
        return len(definitions).to_bytes(8, "little") + definitions + flat.tobytes()

    def admit(self, incoming: list) -> dict:
        """Admit the successors sent here (one batch per sender, None for none) and this
        partition's own: number the new ones in key order, check the invariants on them.
        Returns the new count, each invariant's least violating (key, id) in this level,
        and (with edges) per sender the ids of its batch's states, in its order."""
        candidates, index, P = self.candidates, self.index, self.P
        width = P + 3
        answers = [None] * self.count
        for sender, batch in enumerate(incoming):
            if batch is None:
                continue
            size = int.from_bytes(batch[:8], "little")
            self._learn(batch[8:8 + size])
            flat = array("Q")
            flat.frombytes(batch[8 + size:])
            packed_states = [g << (P * BITS) for g in map(self.fp_global.__getitem__, flat[0::width])]
            for p in range(P):
                local_ids = map(self.fp_local.__getitem__, flat[1 + p::width])
                packed_states = [packed | (lid << (p * BITS)) for packed, lid in zip(packed_states, local_ids)]
            for after, parent_key, packed_label in zip(packed_states, flat[P + 1::width], flat[P + 2::width]):
                if after in index:
                    continue
                label = packed_label >> 32
                entry = candidates.get(after)
                if entry is None or (parent_key, label) < entry[:2]:
                    candidates[after] = (parent_key, label, sender, packed_label & 0xFFFFFFFF)
            answers[sender] = packed_states if self.record_edges else None
        first = len(self.states)
        unordered = list(candidates)
        unordered_keys = list(map(self.key, unordered))
        order = sorted(range(len(unordered)), key=unordered_keys.__getitem__)
        new = list(map(unordered.__getitem__, order))
        self.states.extend(new)
        index.update(zip(new, range(first, first + len(new))))
        self.keys.extend(map(unordered_keys.__getitem__, order))
        entries = list(map(candidates.__getitem__, new))
        self.via.extend([label for _, label, _, _ in entries])
        self.parent_worker.extend([worker for _, _, worker, _ in entries])
        self.parent_id.extend([parent for _, _, _, parent in entries])
        candidates.clear()
        self.frontier = range(first, len(self.states))
        if self.frontier:
            self.level_starts.append(first)
        violations = self._check_states(self.frontier)
        if self.record_edges:
            for at, after in self.waiting_own:
                self.edge_dst[at] = index[after]
            self.waiting_own.clear()
            answers = [None if order is None else array("q", map(index.__getitem__, order)).tobytes()
                       for order in answers]
        return {"new": len(self.frontier), "violations": violations, "answers": answers}

    def _check_states(self, ids) -> dict:
        """Each active invariant's least violating state among `ids` (they are in key order)."""
        found = {}
        invariants = self._active(self.invariants)
        if not invariants:
            return found
        for state_id in ids:
            for name, holds in invariants:
                if name not in found and not holds(self.states[state_id]):
                    found[name] = (self.keys[state_id], self.me, state_id)
        return found

    def resolve(self, answers: list) -> None:
        """The ids the owners gave the states this partition sent them: the waiting edges' targets."""
        for owner, answer in enumerate(answers):
            if answer is None:
                continue
            ids = array("q")
            ids.frombytes(answer)
            for at, slot in self.waiting[owner]:
                self.edge_dst[at] = ids[slot]
            self.waiting[owner].clear()

    # ------------------------------------------------------------ results

    def size(self) -> int:
        return len(self.states)

    def origin(self, state_id: int) -> tuple:
        """(parent worker, parent id, label id, readable state) of one state."""
        return (self.parent_worker[state_id], self.parent_id[state_id], self.via[state_id],
                self.engine.decode(self.states[state_id]))

    def readable(self, state_id: int):
        return self.engine.decode(self.states[state_id])

    def initial_ids(self) -> list[int]:
        return [state_id for state_id, worker in enumerate(self.parent_worker) if worker < 0]

    def levels(self) -> tuple[bytes, list[int]]:
        """This partition's keys in id order, and where each level's ids start."""
        return self.keys.tobytes(), self.level_starts

    def edges(self, global_ids: list) -> tuple[bytes, bytes, bytes]:
        """This partition's edges in global ids (`global_ids[w]`: worker w's local id ->
        global id, raw int64s), as raw arrays."""
        maps = []
        for raw in global_ids:
            ids = array("q")
            ids.frombytes(raw)
            maps.append(ids)
        mine = maps[self.me]
        src = array("q", map(mine.__getitem__, self.edge_src))
        dst = array("q", (maps[worker][target] for worker, target in zip(self.edge_worker, self.edge_dst)))
        return src.tobytes(), self.edge_label.tobytes(), dst.tobytes()

    def leads_to_masks(self, pairs_of: Callable) -> list[tuple[bytes, bytes]]:
        from .fast import leads_to_masks

        pairs = pairs_of(self.model)
        return [(bytes(a), bytes(b)) for a, b in leads_to_masks(self.engine, self.states, pairs)]

    def memory(self) -> int:
        """This worker's peak resident memory in bytes."""
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

# ------------------------------------------------------------------ worker processes


def serve(connection, model_factory, index, count, record_edges) -> None:
    """A worker process: build the partition, then answer (method, arguments) until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's to handle
    try:
        partition = Partition(model_factory, index, count, record_edges)
    except BaseException:
        connection.send(("error", traceback.format_exc(limit=4)))
        return
    connection.send(("ok", None))
    while True:
        try:
            message = connection.recv()
        except EOFError:
            return
        if message is None:
            return
        method, arguments = message
        try:
            connection.send(("ok", getattr(partition, method)(*arguments)))
        except BaseException as error:
            connection.send(("error", f"{type(error).__name__}: {error}"))


class ProcessPool:
    """Partitions in forked worker processes, called over pipes, all at once."""

    def __init__(self, model_factory, count: int, record_edges: bool):
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.connections, self.processes = [], []
        for index in range(count):
            mine, theirs = context.Pipe()
            process = context.Process(target=serve, args=(theirs, model_factory, index, count, record_edges),
                                      name=f"protocol-worker-{index}", daemon=True)
            process.start()
            theirs.close()
            self.connections.append(mine)
            self.processes.append(process)
        for index in range(count):
            self._receive(index)

    def call(self, method: str, per_worker: list) -> list:
        """partition.method(*per_worker[i]) on every worker i, in parallel."""
        for index, arguments in enumerate(per_worker):
            try:
                self.connections[index].send((method, arguments))
            except (BrokenPipeError, ConnectionResetError, OSError):
                self._lost(index)
        return [self._receive(index) for index in range(len(per_worker))]

    def call_one(self, index: int, method: str, *arguments):
        try:
            self.connections[index].send((method, arguments))
        except (BrokenPipeError, ConnectionResetError, OSError):
            self._lost(index)
        return self._receive(index)

    def _receive(self, index: int):
        try:
            status, value = self.connections[index].recv()
        except (EOFError, ConnectionResetError, OSError):
            self._lost(index)
        if status == "error":
            raise WorkerLost(f"worker {index} (pid {self.processes[index].pid}) failed: "
                             f"{value.strip().splitlines()[-1]}")
        return value

    def _lost(self, index: int):
        process = self.processes[index]
        process.join(timeout=1)
        code = process.exitcode
        how = (f"killed by signal {-code}" if code is not None and code < 0
               else f"exited with status {code}" if code is not None else "stopped answering")
        raise WorkerLost(f"worker {index} (pid {process.pid}) died ({how}): the run has no verdict")

    def close(self) -> None:
        for connection in self.connections:
            try:
                connection.send(None)
            except OSError:
                pass
        for process in self.processes:
            process.join(timeout=2)
            if process.is_alive():
                process.kill()
                process.join()


# ------------------------------------------------------------------ the coordinator


class ParallelExploration:
    """What `explore_parallel` found: the counts of `checker.Exploration`, violations
    chosen deterministically, and paths and states fetched from the partitions."""

    def __init__(self, pool, labels):
        self.pool = pool
        self.labels = list(labels)
        self.distinct_states = self.transitions = self.depth = 0
        self.complete = self.interrupted = False
        self.seconds = 0.0
        self.violations: dict = {}  # name -> ("state", worker, id) | ("step", worker, id, label, after)
        self.sizes: list[int] = []
        self.level_sizes: list[int] = []
        self.bytes_exchanged = 0
        self.edges_recorded = False
        self.edge_src = self.edge_label = self.edge_dst = None
        self.worker_memory: list[int] = []
        self.reduction = None
        self.worker_levels: list[list[int]] = []  # per worker: the level number of each of its levels

    def number_globally(self) -> None:
        """Global ids independent of N: every state by (level, key), merged from the
        partitions (each already in that order). Sets `owner_of[gid]`, `local_of[gid]`
        and each worker's local -> global ids (`global_ids`)."""
        import heapq

        parts = self.pool.call("levels", [()] * len(self.sizes))
        streams = []
        for worker, (raw, starts) in enumerate(parts):
            keys = array("Q")
            keys.frombytes(raw)
            level_of = array("l", bytes(8 * len(keys)))
            levels = self._level_numbers(worker, starts, len(keys))
            for (start, end), level in levels:
                level_of[start:end] = array("l", [level]) * (end - start)
            streams.append(zip(level_of, keys, repeat(worker), range(len(keys))))
        self.owner_of, self.local_of = array("b"), array("q")
        self.global_ids = [array("q", bytes(8 * len(raw))) for raw, _ in parts]
        for global_id, (_, _, worker, local) in enumerate(heapq.merge(*streams)):
            self.owner_of.append(worker)
            self.local_of.append(local)
            self.global_ids[worker][local] = global_id

    def _level_numbers(self, worker: int, starts: list[int], size: int) -> list:
        """((first id, end id), level number) of each of a partition's levels."""
        levels = self.worker_levels[worker]
        ends = starts[1:] + [size]
        return [((start, end), level) for start, end, level in zip(starts, ends, levels)]

    def locate(self, state_id: int) -> tuple[int, int]:
        return self.owner_of[state_id], self.local_of[state_id]

    def state(self, state_id: int):
        worker, local = self.locate(state_id)
        return self.pool.call_one(worker, "readable", local)

    def stored_path(self, worker: int, local: int) -> list:
        steps = []
        while worker >= 0:
            parent_worker, parent, label, state = self.pool.call_one(worker, "origin", local)
            steps.append((None if label < 0 else self.labels[label], state))
            worker, local = parent_worker, parent
        steps.reverse()
        return steps

    def counterexample(self, name: str):
        found = self.violations.get(name)
        if found is None:
            return None
        if found[0] == "state":
            return self.stored_path(found[1], found[2])
        _, worker, local, label, after = found
        return self.stored_path(worker, local) + [(self.labels[label], after)]

    def initial_ids(self) -> list[int]:
        ids = self.pool.call("initial_ids", [()] * len(self.sizes))
        return sorted(self.global_ids[worker][local] for worker, locals_ in enumerate(ids) for local in locals_)

    def pair_masks(self, pairs_of: Callable) -> list:
        """Per leads-to pair, (triggers, unmet) over the global ids, computed by the partitions
        in their own order and interleaved here as the global numbering does."""
        per_worker = self.pool.call("leads_to_masks", [(pairs_of,)] * len(self.sizes))

        def interleaved(parts):
            streams = [iter(part) for part in parts]
            return bytearray(map(next, map(streams.__getitem__, self.owner_of)))

        return [(interleaved([masks[i][0] for masks in per_worker]), interleaved([masks[i][1] for masks in per_worker]))
                for i in range(len(per_worker[0]))]

    def gather_edges(self) -> None:
        self.number_globally()
        raw_ids = [ids.tobytes() for ids in self.global_ids]
        parts = self.pool.call("edges", [(raw_ids,)] * len(self.sizes))
        self.edge_src, self.edge_label, self.edge_dst = array("q"), array("i"), array("q")
        for src, label, dst in parts:
            self.edge_src.frombytes(src)
            self.edge_label.frombytes(label)
            self.edge_dst.frombytes(dst)
        self.edge_label = array("q", self.edge_label)
        self.edges_recorded = True


def explore_parallel(model_factory: Callable[[], Model], workers: int, *, record_edges: bool = False,
                     stop_on_violation: bool = False, max_states: int | None = None,
                     on_progress: Callable | None = None, pool=None) -> ParallelExploration:
    """Explore the model `model_factory()` builds with `workers` partitions (forked worker
    processes unless `pool` gives others, e.g. Ray actors). The pool stays open on the
    result (`run.pool`) for paths and liveness: close it with `run.pool.close()`.

    `max_states` and `stop_on_violation` stop at the end of a level: the counts of
    such a cut run are those of whole levels, not the sequential search's."""
    from .checker import Progress

    started = time.perf_counter()
    labels = model_factory().labels
    if pool is None:
        pool = ProcessPool(model_factory, workers, record_edges)
    run = ParallelExploration(pool, labels)
    run.edges_recorded = record_edges
    limit = max_states if max_states is not None else float("inf")
    try:
        admitted = pool.call("start", [()] * workers)
        while True:
            new = sum(answer["new"] for answer in admitted)
            if not new:
                run.complete = True
                break
            run.depth += 1
            run.level_sizes.append(new)
            while len(run.worker_levels) < workers:
                run.worker_levels.append([])
            for worker, answer in enumerate(admitted):
                if answer["new"]:
                    run.worker_levels[worker].append(run.depth)
            run.distinct_states += new
            found = [name for name in _note_state_violations(run, admitted)]
            if found:
                pool.call("retire", [(found,)] * workers)
            if on_progress is not None:
                on_progress(Progress(run.distinct_states, run.depth, new, time.perf_counter() - started))
            if (stop_on_violation and run.violations) or run.distinct_states >= limit:
                break
            expanded = pool.call("expand", [()] * workers)
            run.transitions += sum(transitions for _, transitions, _ in expanded)
            found = _note_step_violations(run, expanded)
            if found:
                pool.call("retire", [(found,)] * workers)
            batches = [[expanded[sender][0][owner] for sender in range(workers)] for owner in range(workers)]
            run.bytes_exchanged += sum(len(batch) for batches_in in batches for batch in batches_in if batch)
            admitted = pool.call("admit", [(batches[owner],) for owner in range(workers)])
            if record_edges:  # each sender learns the ids its successors got: its edges' targets
                pool.call("resolve", [([admitted[owner]["answers"][me] for owner in range(workers)],)
                                      for me in range(workers)])
        if record_edges and run.complete:
            run.sizes = pool.call("size", [()] * workers)
            run.gather_edges()
    except KeyboardInterrupt:  # the pipes may hold answers never read: stop the workers
        run.interrupted = True
        run.complete = False
        pool.close()
    except BaseException:  # a worker lost: stop the others, no verdict
        pool.close()
        raise
    run.sizes = pool.call("size", [()] * workers) if not run.interrupted else run.sizes
    run.worker_memory = pool.call("memory", [()] * workers) if not run.interrupted else []
    run.seconds = time.perf_counter() - started
    return run


def _note_state_violations(run: ParallelExploration, admitted: list) -> list[str]:
    """Record each invariant first violated in this level, at its least key."""
    found = {}
    for answer in admitted:
        for name, (key, worker, local) in answer["violations"].items():
            if name not in run.violations and (name not in found or key < found[name][0]):
                found[name] = (key, worker, local)
    for name, (_key, worker, local) in found.items():
        run.violations[name] = ("state", worker, local)
    return list(found)


def _note_step_violations(run: ParallelExploration, expanded: list) -> list[str]:
    """Record each transition property first violated in this level, at its least (parent key, label)."""
    found = {}
    for _, _, violations in expanded:
        for name, (parent_key, label, worker, local, after) in violations.items():
            if name not in run.violations and (name not in found or (parent_key, label) < found[name][:2]):
                found[name] = (parent_key, label, worker, local, after)
    for name, (_key, label, worker, local, after) in found.items():
        run.violations[name] = ("step", worker, local, label, after)
    return list(found)


def liveness_pairs(name: str, model: Model) -> list:
    """The leads-to pairs of property `name` (a partition builds its own model)."""
    return model.liveness[name]


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
