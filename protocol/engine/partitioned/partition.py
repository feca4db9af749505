"""One partition of the partitioned search: the states it owns, and its share of each level.

A `Partition` (a worker process, or a Ray actor) owns the states whose owner
is its index (`owner`: by the globals' and process 0's locals' fingerprints,
so a local step of another process keeps the state where it is), keeps their
seen-set, and expands its share of each breadth-first level with the packed
engine's successor code (`Engine.successor_body`) generated into one loop.
Each successor it owns is admitted at once; one owned elsewhere goes into
that owner's batch (wire.py). It keeps its edges in rows by the owner of their
targets, for liveness (distributed_liveness.py). Traces are one worker's, found
again by the coordinator (`ParallelExploration.one_worker`). Knows nothing of the
protocol.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from itertools import chain, filterfalse
from typing import Callable

from protocol.engine import Model
from protocol.engine.checker import Guarded
from protocol.engine.partitioned.liveness import LivenessShare
from protocol.engine.fast import BITS, MASK, Engine, Successor
from protocol.engine.partitioned.wire import ComponentNames


class AnyOf:
    """True once any of its lists is non-empty."""

    def __init__(self, lists: list):
        self.lists = lists

    def __bool__(self) -> bool:
        return any(self.lists)


class Partition(LivenessShare):
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
        self.names = ComponentNames(self.engine, count)  # the wire's names of the components
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
        self.key = self.names.compile_key()
        self._checks()
        self.sorted_ids: array | None = None  # local ids in (level, key) order: see `levels`
        # Deciding liveness in place (`screen_rows` on): rows, stuttering states, masks, counts.
        self.rows = self.stutters = self.masks = self.incoming = self.region = self.unmet = None

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
        return (self.names.owner_of_global[packed >> (self.P * BITS)] + self.names.owner_of_local[packed & MASK]) % self.count

    def start(self) -> dict:
        """Admit the initial states this partition owns: level 1."""
        self.level_first = 0
        for state in self.model.initial_states:
            packed = self.engine.encode(state)
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
        batches = [None if owner == me else self.names.batch(owner, sent[owner]) for owner in range(count)]
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

        def route(successor: Successor) -> list[str]:
            label, state, globals_, first_locals = successor
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
        namespace.update(owner_of_global=self.names.owner_of_global, owner_of_local=self.names.owner_of_local, seen=seen,
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
            received = self.names.decode_batch(batch)
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

    def memory(self) -> int:
        """This worker's peak resident memory in bytes."""
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
