"""Shared-nothing parallel breadth-first search over a `Model`. Knows nothing of the protocol.

States are hash-partitioned: each `Partition` (a worker process, or a Ray
actor) owns the states whose owner (below) is its index, keeps their
seen-set, expands its share of each breadth-first level with the packed
engine's successor lines (engine/fast.py, generated into one loop per
partition) and sends every successor it does not own to its owner, in one
batch of raw bytes per owner and level. A successor it owns is admitted at
once, as the sequential search does. The search is level-synchronous: the
coordinator (`explore_parallel`) runs one level at a time, expand then
admit, and relays the batches.

Canonical encoding. The packed engine interns components per process, so a
packed int means nothing elsewhere. Every component (the globals, one
process's locals) is named across processes by a 64-bit fingerprint of its
canonical bytes (`canonical`: a deterministic encoding; sets sorted). A
state on the wire is its P+1 component fingerprints; a batch first defines
the components its receiver has not been sent yet, and a receiver that meets
two components with one fingerprint stops loudly, so the exchange is exact,
never probabilistic. A state's owner is the sum of its globals' and process
0's locals' fingerprints, each mod N, mod N: a step of another process leaves
the state where it is, so only steps of the controller and of process 0 can
cross. A state's *key* XORs its component fingerprints (each process's
multiplied by its position's odd factor) into 64 bits; keys order states
deterministically.

Determinism, whatever N. The partitions keep no parents: which states lie
at which depth does not depend on N, and that is all the counts need. A
trace is chosen after the search, backwards: the violation reported is the
least key among the violating states of the first level where a property
fails (for a transition property, the least (source key, label)); the step
into a state is the least (key, label) among the steps into it from the
level before, found by re-expanding that level in every partition (only
the levels on the path, only when a trace is asked for). Liveness is decided
where the edges lie (`ParallelExploration.liveness_holds`); only to find a
lasso are the edges gathered, the states numbered globally by (level, key)
for it. So counts,
depth, verdicts, shortest lengths, traces and lassos are the same for every
N >= 2 (with N = 1 the caller uses the sequential search: same counts and
lengths, its own choice of trace).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import signal
import time
import traceback
from array import array
from bisect import bisect_right
from collections import deque
from itertools import chain, compress, filterfalse, repeat
from operator import add, and_, not_, or_, rshift
from typing import Callable

from . import Model
from .checker import Guarded
from .fast import BITS, MASK, Engine
from .liveness import in_degrees, peel, spread

MASK64 = (1 << 64) - 1


class WorkerLost(RuntimeError):
    """A worker died (killed, out of memory) or failed: the run has no verdict."""


class ComponentCollision(RuntimeError):
    """Two distinct components share a 64-bit fingerprint (never seen; stop rather than merge them)."""


class AnyOf:
    """True once any of its lists is non-empty."""

    def __init__(self, lists: list):
        self.lists = lists

    def __bool__(self) -> bool:
        return any(self.lists)


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
    """One worker's share of the search: the states it owns (see `owner`)."""

    def __init__(self, model_factory: Callable[[], Model], index: int, count: int, record_edges: bool):
        self.model = model_factory()
        self.engine = Engine(self.model)
        self.me, self.count, self.record_edges = index, count, record_edges
        self.P = self.model.processes
        self.states: list = []  # local id -> packed state, level by level
        # The seen-set; with edges, packed -> local id (an edge's target needs its id).
        self.seen: dict | set = {} if record_edges else set()
        self.bounds: list[int] = []  # level k (from 1) holds ids bounds[k-1] .. bounds[k] (or the end)
        self.frontier = range(0)
        self.level_first = 0  # the first id of the level being made
        # Component fingerprints: per interned id, and back (per kind).
        self.global_fps: list[int] = []
        self.local_fps: list[int] = []
        self.fp_global: dict = {}
        self.fp_local: dict = {}
        self.global_keys: list[int] = []  # what each component adds to a state's key
        self.local_keys: list[list[int]] = [[] for _ in range(self.P)]
        # A state's owner: (owner_of_global[its globals] + owner_of_local[process 0's locals]) % count
        self.owner_of_global: list[int] = []
        self.owner_of_local: list[int] = []
        # Per position in a packed state (globals, process 0, 1, ...): fingerprint -> the
        # component's id shifted into that position (a batch is decoded by OR-ing them).
        self.placed: list[dict] = [{} for _ in range(self.P + 1)]
        self._follow_interning()
        self.defined = [(set(), set()) for _ in range(count)]  # what each peer has been sent
        # Edges (with record_edges): rows by local source, one set per owner of the targets
        # (so that liveness can be decided where they lie, see `screen_rows`): per owner,
        # each source's first edge (`row_offsets`), the edges' labels and their targets'
        # ids there. A target sent elsewhere is named by its slot in the batch until
        # `resolve` learns its id; `resolving[o]` is where owner o's unresolved ones start.
        self.row_offsets = [array("q") for _ in range(count)]
        self.row_labels = [array("i") for _ in range(count)]
        self.row_targets = [array("q") for _ in range(count)]
        self.resolving = [0] * count
        self.enabled = array("q")  # per state, the fair families enabled in it (bits as in `_fair_bits`)
        self._expand_level = self._compile_expand()
        self.key = self._compile_key()
        self._checks()
        self.sorted_ids: array | None = None  # local ids in (level, key) order: see `levels`
        # Deciding liveness in place (`screen_rows` on): rows, stuttering states, masks, counts.
        self.rows = self.stutters = self.masks = self.incoming = self.region = self.unmet = None

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
                    self.owner_of_global.append(fp % self.count)
                    self.placed[0][fp] = component_id << (self.P * BITS)
                else:
                    self.owner_of_local.append(fp % self.count)
                    for p in range(self.P):
                        self.placed[1 + p][fp] = component_id << (p * BITS)
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
        """The partition that owns a state: by its globals and process 0's locals, so
        that a local step of another process keeps the state where it is."""
        return (self.owner_of_global[packed >> (self.P * BITS)] + self.owner_of_local[packed & MASK]) % self.count

    def start(self) -> dict:
        """Admit the initial states this partition owns: level 1."""
        self._catch_up()
        self.level_first = 0
        for state in self.model.initial_states:
            packed = self.engine.encode(state)
            self._catch_up()
            if self.owner(packed) == self.me:
                self._admit_own(packed)
        return self.admit([None] * self.count)

    def _admit_own(self, packed: int) -> None:
        if packed not in self.seen:
            if self.record_edges:
                self.seen[packed] = len(self.states)
            else:
                self.seen.add(packed)
            self.states.append(packed)

    def expand(self) -> tuple[list, int, dict]:
        """Expand this partition's frontier: per owner, the batch of successors it is sent
        (None for this partition's own, admitted here as they are made), the
        transitions, and the least violation of each transition property in this
        level (source key, label, ...)."""
        count, me = self.count, self.me
        step_violations: dict = {}
        check, watching = self._step_checker(step_violations)
        self.level_first = len(self.states)  # the next level starts with the successors kept here
        if self.record_edges:
            # per owner: its batch, as packed -> slot (the edges name a sent target by its slot)
            slots: list = [None if owner == me else {} for owner in range(count)]
            self.resolving = list(map(len, self.row_targets))
            transitions = self._expand_level(self.frontier, self.states, slots, check, watching)
            sent = [None if owner == me else list(slots[owner]) for owner in range(count)]
        else:
            sets: list = [None if owner == me else set() for owner in range(count)]
            transitions = self._expand_level(self.frontier, self.states,
                                             [None if found is None else found.add for found in sets],
                                             check, watching)
            sent = [None if found is None else list(found) for found in sets]
        self._catch_up()
        batches = [None if owner == me else self._batch(owner, sent[owner]) for owner in range(count)]
        return batches, transitions, step_violations

    def _compile_expand(self):
        """The hot loop of `expand`: the engine's successor lines, each successor handed
        on as it is made, with no call per successor but a set or list operation.
        Its owner comes from the component ids, not the packed int; a local step of a
        process other than 0 keeps the globals and process 0's locals, so it stays
        here. A successor owned here is admitted at once (as the sequential search
        does); one owned elsewhere goes into that owner's batch, once. With edges,
        every step is kept in the rows of its target's owner: its label and its
        target's id there (for a target sent elsewhere, its slot in the batch until
        `resolve`); and each state's enabled fair families, from its steps' labels."""
        me, count, record = self.me, self.count, self.record_edges
        owner_of = (lambda g, l0: f"owner_of_global[{g}] ^ owner_of_local[{l0}]") if count == 2 else \
            (lambda g, l0: f"(owner_of_global[{g}] + owner_of_local[{l0}]) % {count}")
        fair_bits = self._fair_bits()

        def enables(label: str) -> list[str]:
            if not label.isdigit():
                return [f"enabled |= fair_bits[{label}]"]
            return [f"enabled |= {fair_bits[int(label)]}"] if fair_bits[int(label)] else []

        def route(label: str, state: str, globals_: str | None, first_locals: str | None) -> list[str]:
            stays = globals_ is None and first_locals is None
            if record:
                keep = ["target = seen_get(after)", "if target is None:",
                        "    target = seen[after] = len(states)", "    add_state(after)",
                        f"label_here({label})", "target_here(target)"]
                send = ["batch = slots[owner]", "target = batch.get(after)", "if target is None:",
                        "    target = batch[after] = len(batch)",
                        f"label_to[owner]({label})", "target_to[owner](target)"]
            else:
                keep = ["if after not in seen:", "    seen_add(after)", "    add_state(after)"]
                send = ["slots[owner](after)"]
            made = ["after = " + state, "transitions += 1", *(enables(label) if record else [])]
            if stays:
                return [*made, *keep]
            return [*made, f"owner = {owner_of(globals_ or 'g', first_locals or 'l0')}",
                    f"if owner == {me}:", *["    " + line for line in keep],
                    "else:", *["    " + line for line in send]]

        body, namespace = self.engine.successor_body(route)
        rows = [f"        offset_to_{owner}(len(targets_{owner}))" for owner in range(count)] if record else []
        lines = [
            "def expand_level(frontier, states, slots, check, watching):",
            "    add_state = states.append",
            "    transitions = 0",
            "    for source in frontier:",
            "        s = states[source]",
            *(["        enabled = 0", *rows] if record else []),
            *["    " + line for line in body],
            *(["        enabled_of(enabled)"] if record else []),
            # after the successors: making them may have found a component that fails one
            "        if watching:",
            "            check(source, s)",
            "    return transitions",
        ]
        seen = self.seen
        namespace.update(owner_of_global=self.owner_of_global, owner_of_local=self.owner_of_local, seen=seen,
                         seen_get=getattr(seen, "get", None), seen_add=getattr(seen, "add", None),
                         fair_bits=fair_bits, enabled_of=self.enabled.append,
                         label_to=[labels.append for labels in self.row_labels],
                         target_to=[targets.append for targets in self.row_targets],
                         label_here=self.row_labels[me].append, target_here=self.row_targets[me].append,
                         **{f"targets_{owner}": self.row_targets[owner] for owner in range(count)},
                         **{f"offset_to_{owner}": self.row_offsets[owner].append for owner in range(count)})
        exec("\n".join(lines), namespace)
        return namespace["expand_level"]

    def _step_checker(self, step_violations: dict) -> tuple:
        """(check, watching): `check(source, s)` checks a source's steps against the
        transition properties not yet violated, keeping each one's least violation by
        (source key, label); it is called when `watching` is true: always if one of
        them is unguarded, else once a guarded one's watch is non-empty, which can
        happen mid-level (a component that fails it)."""
        unviolated = [(name, prop) for name, prop in self.steps if name not in self.violated]
        if not unviolated:
            return None, False
        watches = [prop.watch for _, prop in unviolated if isinstance(prop, Guarded)]
        if len(watches) < len(unviolated):
            watching = True
        elif len(watches) == 1:
            watching = watches[0]  # a list: true once non-empty
        else:
            watching = AnyOf(watches)
        successors, me, decode, key = self.engine.successors, self.me, self.engine.decode, self.key

        def check(source: int, s: int) -> None:
            steps = self._active(self.steps)
            for label, after in successors(s):
                for name, holds in steps:
                    if not holds(s, after):
                        found = step_violations.get(name)
                        if found is None or (key(s), label) < found[:2]:
                            step_violations[name] = (key(s), label, me, source, decode(after))

        return check, watching

    def _columns(self, states: list) -> list:
        """The component ids of `states`, by position: globals, then process 0, 1, ...
        (C-level maps over the packed ints: no Python code per state)."""
        shift = self.P * BITS
        columns = [list(map(rshift, states, repeat(shift))), list(map(and_, states, repeat(MASK)))]
        columns += [list(map(and_, map(rshift, states, repeat(p * BITS)), repeat(MASK))) for p in range(1, self.P)]
        return columns

    def _batch(self, owner: int, states: list) -> bytes:
        """One owner's batch: the components it has not been sent, pickled (few), then
        per state its record (component fingerprints), as raw uint64s."""
        sent_globals, sent_locals = self.defined[owner]  # component ids sent to this owner
        engine, width = self.engine, self.P + 1
        columns = self._columns(states)
        new_globals = set(columns[0]).difference(sent_globals)
        new_locals = set().union(*columns[1:]).difference(sent_locals)
        sent_globals.update(new_globals)
        sent_locals.update(new_locals)
        flat = array("Q", bytes(8 * width * len(states)))
        for position, column in enumerate(columns):
            fps = self.global_fps if position == 0 else self.local_fps
            flat[position::width] = array("Q", map(fps.__getitem__, column))
        definitions = pickle.dumps(
            (sorted((self.global_fps[g], engine.globals[g]) for g in new_globals),
             sorted((self.local_fps[lid], engine.locals[lid]) for lid in new_locals)),
            protocol=pickle.HIGHEST_PROTOCOL)
        return len(definitions).to_bytes(8, "little") + definitions + flat.tobytes()

    def _decode_batch(self, batch: bytes) -> list:
        """A peer's batch as packed states here (interning the components it defines):
        each fingerprint looked up as its component id already shifted into place, the
        shifted ids OR-ed together (C-level maps again)."""
        size = int.from_bytes(batch[:8], "little")
        self._learn(batch[8:8 + size])
        flat = array("Q")
        flat.frombytes(batch[8 + size:])
        width = self.P + 1
        placed = [map(self.placed[position].__getitem__, flat[position::width]) for position in range(width)]
        packed = placed[0]
        for column in placed[1:]:
            packed = map(or_, packed, column)
        return list(packed)

    def admit(self, incoming: list) -> dict:
        """Admit the successors sent here (one batch per sender, None for none), after
        those made here: check the invariants on the level's new states. Returns the
        new count, each invariant's least violating (key, worker, id) in this level,
        and (with edges) per sender the ids of its batch's states, in its order."""
        seen, states = self.seen, self.states
        answers = [None] * self.count
        for sender, batch in enumerate(incoming):
            if batch is None:
                continue
            received = self._decode_batch(batch)
            fresh = list(filterfalse(seen.__contains__, received))
            if self.record_edges:
                seen.update(zip(fresh, range(len(states), len(states) + len(fresh))))
                answers[sender] = array("q", map(seen.__getitem__, received)).tobytes()
            else:
                seen.update(fresh)
            states.extend(fresh)
        first = self.level_first
        self.bounds.append(first)
        self.frontier = range(first, len(states))
        violations = self._check_states(self.frontier)
        return {"new": len(self.frontier), "violations": violations, "answers": answers}

    def _check_states(self, ids) -> dict:
        """Each active invariant's least violating state among `ids`, by key."""
        found = {}
        invariants = self._active(self.invariants)
        if not invariants:
            return found
        for state_id in ids:
            for name, holds in invariants:
                if not holds(self.states[state_id]):
                    key = self.key(self.states[state_id])
                    if name not in found or key < found[name][0]:
                        found[name] = (key, self.me, state_id)
        return found

    def resolve(self, answers: list) -> None:
        """The ids the owners gave the states this partition sent them: this level's edges
        into each owner named its targets by their slots in the batch, now by their ids."""
        for owner, answer in enumerate(answers):
            if answer is None or owner == self.me:
                continue
            ids = array("q")
            ids.frombytes(answer)
            targets, start = self.row_targets[owner], self.resolving[owner]
            targets[start:] = array("q", map(ids.__getitem__, targets[start:]))

    # ------------------------------------------------------------ traces

    def level_of(self, state_id: int) -> int:
        """The level (from 1) of one of this partition's states."""
        return bisect_right(self.bounds, state_id)

    def predecessor(self, target, level: int):
        """Among this partition's states at `level`, the least (key, label) with a step to
        the readable state `target`: (key, label id, id, readable state), or None."""
        if level > len(self.bounds):
            return None
        wanted = self.engine.encode(target)
        self._catch_up()
        start = self.bounds[level - 1]
        end = self.bounds[level] if level < len(self.bounds) else len(self.states)
        best = None
        for state_id in range(start, end):
            s = self.states[state_id]
            label = next((label for label, after in self.engine.successors(s) if after == wanted), None)
            if label is not None and (best is None or (self.key(s), label) < best[:2]):
                best = (self.key(s), label, state_id)
        self._catch_up()
        return None if best is None else (*best, self.engine.decode(self.states[best[2]]))

    # ------------------------------------------------------------ results

    def size(self) -> int:
        return len(self.states)

    def readable(self, state_id: int):
        return self.engine.decode(self.states[state_id])

    def initial_ids(self) -> list[int]:
        return list(range(self.bounds[0], self.bounds[1] if len(self.bounds) > 1 else len(self.states)))

    def levels(self) -> tuple[bytes, list[int], bytes]:
        """This partition's ids in (level, key) order, the order of the global numbering,
        with their keys, and where each level starts (by level, from 1)."""
        keys = list(map(self.key, self.states))
        order = array("q")
        ends = self.bounds[1:] + [len(self.states)]
        for start, end in zip(self.bounds, ends):
            order.extend(sorted(range(start, end), key=keys.__getitem__))
        self.sorted_ids = order
        return array("Q", map(keys.__getitem__, order)).tobytes(), list(self.bounds), order.tobytes()

    def edges(self, global_ids: list) -> tuple[bytes, bytes, bytes, bytes]:
        """This partition's edges in global ids (`global_ids[w]`: worker w's local id ->
        global id, raw int64s), as raw arrays: each state's out-degree, then the edges'
        labels and targets, by source in the order of the global numbering (`levels`
        first), a source's edges in label order (the engine's); and each state's
        enabled fair families (a bit mask)."""
        rows = []
        for owner, raw in enumerate(global_ids):
            ids = array("q")
            ids.frombytes(raw)
            rows.append((self._closed_row_offsets(owner), self.row_labels[owner],
                         array("q", map(ids.__getitem__, self.row_targets[owner]))))
        degrees, label_out, target_out = array("q"), array("i"), array("q")
        for local in self.sorted_ids:
            pieces = [(labels[offsets[local]:offsets[local + 1]], targets[offsets[local]:offsets[local + 1]])
                      for offsets, labels, targets in rows]
            pieces = [piece for piece in pieces if piece[0]]
            if len(pieces) == 1:
                label_out.extend(pieces[0][0])
                target_out.extend(pieces[0][1])
            elif pieces:  # edges into several owners: merged back into label order
                merged = sorted(zip(chain.from_iterable(labels for labels, _ in pieces),
                                    chain.from_iterable(targets for _, targets in pieces)))
                label_out.extend(label for label, _ in merged)
                target_out.extend(target for _, target in merged)
            degrees.append(sum(len(labels) for labels, _ in pieces))
        enabled = array("q", map(self.enabled.__getitem__, self.sorted_ids))
        return degrees.tobytes(), label_out.tobytes(), target_out.tobytes(), enabled.tobytes()

    def _closed_row_offsets(self, owner: int) -> array:
        """Where each source's edges into `owner` start, and where the last one's end:
        the search is over (every state was expanded), so the end is added in place, once."""
        offsets = self.row_offsets[owner]
        if len(offsets) == len(self.states):
            offsets.append(len(self.row_targets[owner]))
        return offsets

    def _fair_bits(self) -> list[int]:
        """Per label id, the bit of its weak-fairness family (0 when it is not fair), as
        the liveness graph numbers the families: so each state's enabled families are
        computed here, in parallel, instead of on the coordinator."""
        bit_of = {family: 1 << i for i, family in enumerate(self.model.fair_families)}
        return [bit_of.get(instance.family, 0) if instance.family is not None else 0
                for instance in self.model.instances]

    def leads_to_masks(self, pairs_of: Callable) -> list[tuple[bytes, bytes]]:
        """Per leads-to pair, (triggers, unmet) over this partition's states in the order
        of the global numbering (`levels` first)."""
        from .fast import leads_to_masks

        pairs = pairs_of(self.model)
        states = list(map(self.states.__getitem__, self.sorted_ids))
        return [(bytes(a), bytes(b)) for a, b in leads_to_masks(self.engine, states, pairs)]

    # ------------------------------------------------------------ liveness, in place

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
        from .fast import leads_to_masks

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

    def screen_done(self) -> None:
        """Drop what deciding in place kept (the graph is gathered next, or not at all)."""
        self.rows = self.masks = self.incoming = self.region = self.unmet = self.stutters = None

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
        deadline = time.monotonic() + 0.5  # an idle worker exits at once; a busy one (an interrupt) is killed
        for process in self.processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
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
        self.enabled = None  # per state, its enabled fair families (gathered with the edges)
        self.gathered = False  # the edges are on the coordinator (`gather_edges`)
        # Deciding liveness in place (`liveness_holds`): whether the partitions have laid
        # out their rows, what each sends each other's in-degrees until the peeling,
        # and once peeled, whether the graph has no cycle.
        self.laid_out = False
        self.in_degrees = self.acyclic = None
        self.worker_memory: list[int] = []
        self.reduction = None

    def number_globally(self) -> None:
        """Global ids independent of N: every state by (level, key), merged from the
        partitions (each gives its ids in that order). Sets `owner_of[gid]`,
        `local_of[gid]` and each worker's local -> global ids (`global_ids`)."""
        import heapq

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

    def locate(self, state_id: int) -> tuple[int, int]:
        return self.owner_of[state_id], self.local_of[state_id]

    def state(self, state_id: int):
        worker, local = self.locate(state_id)
        return self.pool.call_one(worker, "readable", local)

    def stored_path(self, worker: int, local: int) -> list:
        """The path to one state, chosen whatever N: backwards, level by level, its
        predecessor of least (key, label) in the level before, over every partition
        (the search keeps no parents: it re-expands one level per step back)."""
        state = self.pool.call_one(worker, "readable", local)
        level = self.pool.call_one(worker, "level_of", local)
        steps = []
        while level > 1:
            level -= 1
            found = [answer for answer in self.pool.call("predecessor", [(state, level)] * len(self.sizes))
                     if answer is not None]
            _key, label, _id, parent = min(found, key=lambda answer: answer[:2])
            steps.append((self.labels[label], state))
            state = parent
        steps.append((None, state))
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
        flags = self.pool.call("screen_pairs", [(pairs_of,)] * len(self.sizes))
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
