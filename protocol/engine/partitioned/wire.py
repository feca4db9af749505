"""The wire format of the partitioned search: components named across processes, and batches.

The packed engine interns components per process, so a packed int means
nothing elsewhere. Every component (the globals, one process's locals) is
named across processes by a 64-bit fingerprint of its canonical bytes
(`canonical`: a deterministic encoding; sets sorted). A state on the wire is
its P+1 component fingerprints; a batch first defines the components its
receiver has not been sent yet, and a receiver that meets two components with
one fingerprint stops loudly, so the exchange is exact, never probabilistic.

`ComponentNames` keeps one partition's tables: each interned component's
fingerprint, its share of a state's owner and key, and the id it has here.
It observes the engine's interning (`Engine.observe_interning`), so that the
tables the hot loop reads are never behind. Knows nothing of the protocol.
"""

from __future__ import annotations

import hashlib
import pickle
from array import array
from itertools import repeat
from operator import and_, or_, rshift

from protocol.engine.fast import BITS, MASK, Engine

MASK64 = (1 << 64) - 1


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


class ComponentNames:
    """One partition's names for its engine's components: fingerprints, owners, keys."""

    def __init__(self, engine: Engine, count: int):
        self.engine, self.count, self.P = engine, count, engine.P
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
        self.defined = [(set(), set()) for _ in range(count)]  # what each peer has been sent
        self.catch_up()
        engine.observe_interning(self.catch_up)

    def compile_key(self):
        """key(packed): the XOR of its components' keys (each process's locals weighted by
        a position's own odd factor, so swapping two processes changes it), unrolled."""
        P = self.P
        terms = [f"gk[s >> {P * BITS}]"] + [f"lk{p}[(s >> {p * BITS}) & {MASK}]" for p in range(P)]
        namespace = {"gk": self.global_keys, **{f"lk{p}": keys for p, keys in enumerate(self.local_keys)}}
        exec(f"def key(s):\n    return {' ^ '.join(terms)}\n", namespace)
        return namespace["key"]

    def catch_up(self, *_observed) -> None:
        """Fingerprint the components the engine interned since last time (the engine's
        interning observer: it calls this as each new component is interned)."""
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

    def learn(self, definitions: bytes) -> None:
        """Intern the components a peer defined, refusing a fingerprint that names two."""
        globals_, locals_ = pickle.loads(definitions)
        engine = self.engine
        for pairs, back, intern, values in ((globals_, self.fp_global, engine.intern_global, engine.globals),
                                            (locals_, self.fp_local, engine.intern_local, engine.locals)):
            for fp, value in pairs:
                if fp not in back:
                    intern(value)  # observed: raises if the value's fingerprint names another component
                if back.get(fp) is None or values[back[fp]] != value or fingerprint(value) != fp:
                    raise ComponentCollision(f"component {value} arrived under a fingerprint not its own")

    def columns(self, states: list) -> list:
        """The component ids of `states`, by position: globals, then process 0, 1, ...
        (C-level maps over the packed ints: no Python code per state)."""
        shift = self.P * BITS
        columns = [list(map(rshift, states, repeat(shift))), list(map(and_, states, repeat(MASK)))]
        columns += [list(map(and_, map(rshift, states, repeat(p * BITS)), repeat(MASK))) for p in range(1, self.P)]
        return columns

    def batch(self, owner: int, states: list) -> bytes:
        """One owner's batch: the components it has not been sent, pickled (few), then
        per state its record (component fingerprints), as raw uint64s."""
        sent_globals, sent_locals = self.defined[owner]  # component ids sent to this owner
        engine, width = self.engine, self.P + 1
        columns = self.columns(states)
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

    def decode_batch(self, batch: bytes) -> list:
        """A peer's batch as packed states here (interning the components it defines):
        each fingerprint looked up as its component id already shifted into place, the
        shifted ids OR-ed together (C-level maps again)."""
        size = int.from_bytes(batch[:8], "little")
        self.learn(batch[8:8 + size])
        flat = array("Q")
        flat.frombytes(batch[8 + size:])
        width = self.P + 1
        placed = [map(self.placed[position].__getitem__, flat[position::width]) for position in range(width)]
        packed = placed[0]
        for column in placed[1:]:
            packed = map(or_, packed, column)
        return list(packed)
