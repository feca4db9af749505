"""The vector engine: a breadth-first level at a time, in numpy. Knows nothing of the protocol.

The packed engine (fast.py) stays the source of truth: it interns the
components (globals, per-process locals), runs the readable actions once
per component and checks the by-component properties as it does so. This
engine mirrors its memos into numpy tables, filled lazily for the entries
a level needs, and moves the per-state work out of the interpreter:

- a state is one uint64 *key* packing its component ids, the globals'
  highest, then process P-1's locals down to process 0's; the widths grow
  with the interned components, and the keys already stored are re-keyed
  (which keeps them sorted: the order is lexicographic on the ids). Keys
  never hash: two states share a key only when they are equal. Where the
  ids need more than 64 bits, a key takes two or three words (`WideLayout`:
  one numpy void, big-endian words, sorted byte-wise, which is the order of
  the ids); past three words the model is refused (`WideKeys`), and `check`
  explores it with the packed engine instead.
- a level is expanded by gathers: a table per controller globals (a CSR of
  its steps), per local action (projection of what it reads of the
  globals, local), per append (append, local), per wide action (globals,
  local, looked up sorted); a whole instance runs per state, an each one
  per (globals, local) (whole.py);
- the successors are laid out in the packed engine's order (parents in
  order, each parent's successors in enumeration order), deduplicated by
  one `np.sort` of the keys with their position in the low bits (or an
  argsort where they do not fit), the first occurrence of each key kept,
  and filtered against the sorted keys seen so far with `searchsorted`.

The trace choice is the packed engine's, exactly: a new state's id is its
order of first occurrence in that layout, its parent the state whose
expansion first produced it. So ids, parents, edges, counts, depth, the
first violation of every property and every counterexample are those of
the packed engine (tests/test_vector.py). Per state it keeps its key
twice (per level in id order, and sorted with the keys seen), the parent's
position in the previous level and the label of the step: about 22 bytes.
"""

from __future__ import annotations

import sys
import time
import weakref
from math import factorial
from typing import Callable, NamedTuple, Sequence

import numpy as np

from protocol.engine import EACH, LOCAL, WHOLE, WIDE, Model
from protocol.engine.checker import Exploration, Progress, Violation, timed
from protocol.engine.fast import UNEVALUATED, Engine, ReducedLiveness
from protocol.engine.interface import Counts, any_premise
from protocol.engine.vector.helpers import pair_verdict
from protocol.engine.vector.liveness import sorted_unique
from protocol.engine.vector.whole import head_of, head_successors, instance_of

UNKNOWN = -2  # a table entry not computed yet (-1: the step is disabled there)
# A level is expanded this many states at a time, which bounds the memory a level's
# successors take in flight (about 30 bytes each); ids and order are the same for any size.
# Multiword keys take a quarter of it per word added: their sort's arrays are several
# times a word's (HoldsAliasShared P=4 to 3M states: 1.8 GB peak at 2^21, 0.67 at 2^19).
SLICE = 1 << 21
# With threads, an array of edges at least this long is copied a range per thread.
SHARED_COPY = 1 << 16
# Where a key and its position overflow a word by at most this many bits, the keys are
# sorted in 2**PART_BITS parts by their top bits (`Search.first_occurrences_in_parts`).
PART_BITS = 10


class WideKeys(Exception):
    """The component ids need more bits than one machine word holds."""


class Growing:
    """A numpy array that grows (doubling) as the interned components do, new entries `fill`."""

    def __init__(self, shape: tuple, fill: int, dtype=np.int32):
        self.fill, self.array = fill, np.full(shape, fill, dtype=dtype)

    def ensure(self, *sizes: int) -> np.ndarray:
        shape = self.array.shape
        if all(size <= have for size, have in zip(sizes, shape)):
            return self.array
        grown = tuple(max(have, 1 << max(size - 1, 1).bit_length()) for size, have in zip(sizes, shape))
        array = np.full(grown, self.fill, dtype=self.array.dtype)
        array[tuple(slice(0, have) for have in shape)] = self.array
        self.array = array
        return array


class Decoded:
    """Keys to look up by their globals (rows) and each process's locals (columns),
    decoded where first asked for (by the thread a piece of lookups goes to), once."""

    def __init__(self, keys: np.ndarray, layout: "KeyLayout"):
        self.keys, self.layout, self.decoded = keys, layout, None

    def rows_and_columns(self) -> tuple[np.ndarray, list[np.ndarray]]:
        if self.decoded is None:
            self.decoded = self.layout.decode(self.keys)
        return self.decoded


class ControllerSegment:
    """One segment of controller instances as a CSR over the globals: per global id, its
    enabled steps' (label id, next globals, append id) from row `start[g]` on."""

    def __init__(self):
        self.start = Growing((64,), -1, np.int64)  # global id -> first row in the flat arrays
        self.count = Growing((64,), 0, np.int64)
        self.label: list[int] = []
        self.next: list[int] = []
        self.append: list[int] = []
        self.flat = (np.zeros(0, np.int64),) * 3

    def add(self, g: int, steps: list, globals_: int) -> None:
        start, count = self.start.ensure(globals_), self.count.ensure(globals_)
        start[g], count[g] = len(self.label), len(steps)
        for label, g2, app in steps:
            self.label.append(label)
            self.next.append(g2)
            self.append.append(app)

    def flatten(self) -> None:
        self.flat = tuple(np.array(column, dtype=np.int64) for column in (self.label, self.next, self.append))


class Tables:
    """numpy mirrors of the packed engine's memos, filled lazily from it."""

    clock = staticmethod(time.process_time)  # the CPU seconds "components" is timed by

    def __init__(self, engine: Engine, parts: dict | None = None):
        self.engine = engine
        self.parts = {} if parts is None else parts
        # per segment of controller instances (more than one only where a whole or each instance splits them)
        self.segments = [ControllerSegment() for _ in engine.controller_segments]
        self.appended = Growing((16, 1024), UNKNOWN)  # (append id, local id) -> local id
        self.local = {name: Growing((4, 1024), UNKNOWN) for name in engine.local_reads}
        self.projection = {name: Growing((64,), 0) for name in engine.local_reads}
        self.wide: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # wide index -> sorted keys, rows
        self.helpers = None  # with --workers: the processes evaluating a share of each batch (helpers.py)

    def spent(self, since: float) -> None:
        """Count the CPU seconds since `since` as the readable actions' (filling the tables)."""
        self.parts["components"] = self.parts.get("components", 0.0) + self.clock() - since

    def controller(self, G: np.ndarray, segment: int = 0):
        """Per frontier row: how many steps of controller segment `segment`, and where they
        start in its flat arrays (`ControllerSegment.flat`)."""
        engine, table = self.engine, self.segments[segment]
        start = table.start.ensure(len(engine.globals))
        missing = sorted_unique(G[start[G] < 0])
        if len(missing):
            clock = self.clock()
            memo = engine.controller_memos[segment]
            for g in missing.tolist():
                steps = memo[g] if g < len(memo) else None
                if steps is None:
                    steps = engine.controller_successors(segment, g)
                table.add(g, steps, len(engine.globals))
            table.flatten()
            self.spent(clock)
        count = table.count.ensure(len(engine.globals))
        return count[G], table.start.array[G]

    def lookup(self, memo: Growing, shape: Callable[[], tuple], rows, columns: np.ndarray,
               compute: Callable[[int, int], int], kind: tuple | None = None) -> np.ndarray:
        """memo[rows, columns] (row 0 where `rows` is None), the missing entries computed by
        `compute(row, column)` (the readable actions, through the packed engine) first;
        where the table is of a `kind` helpers evaluate (helpers.py), they evaluate a
        share of them first."""
        return self.lookup_columns(memo, shape, rows, [columns], compute, kind)[0]

    def lookup_columns(self, memo: Growing, shape: Callable[[], tuple], rows, columns: list | None,
                       compute: Callable[[int, int], int], kind: tuple | None = None,
                       share=None, pieces: list | None = None) -> list[np.ndarray]:
        """`lookup` for several columns against the same rows: the missing entries of all
        computed in one pass (in the order of their index, as one column's are). With a
        `share` (sharing.Share), the lookups are cut in consecutive pieces, one per thread
        (or given as `pieces`, each a `Decoded` or (rows, columns))."""
        if pieces is None:
            spans = [(0, len(columns[0]))] if share is None else share.spans(len(columns[0]))
            pieces = [(None if rows is None else rows[a:b], [column[a:b] for column in columns]) for a, b in spans]
        table = memo.ensure(*shape())
        taken = self.taken(table, pieces, share, missing=True)
        missing = [index for _, piece_missing in taken for index in piece_missing]
        if missing:
            clock = self.clock()
            rows_missing, columns_missing = np.divmod(sorted_unique(np.concatenate(missing)), table.shape[1])
            rows_list, columns_list = rows_missing.tolist(), columns_missing.tolist()
            if self.helpers is not None and kind is not None and self.helpers.help_with(len(rows_list)):
                values = self.helpers.share(kind, rows_list, columns_list)
                try:  # `compute` given what the helpers evaluated
                    computed = [compute(*entry) for entry in zip(rows_list, columns_list, values)]
                finally:
                    self.helpers.forget()
            else:
                computed = [compute(row, column) for row, column in zip(rows_list, columns_list)]
            table = memo.ensure(*shape())  # the readable actions may have interned components
            table[rows_missing, columns_missing] = computed
            self.spent(clock)
            taken = self.taken(table, pieces, share, missing=False)
        if len(taken) == 1:
            return taken[0][0]
        return [np.concatenate([found[k] for found, _ in taken]) for k in range(len(taken[0][0]))]

    @staticmethod
    def taken(table: np.ndarray, pieces: list, share, missing: bool) -> list:
        """Per piece (rows, columns): (table[rows, column] per column, with `missing` the
        indices of the entries still UNKNOWN)."""

        def take(piece) -> tuple[list, list]:
            rows, columns = piece.rows_and_columns() if isinstance(piece, Decoded) else piece
            base = None if rows is None else rows * table.shape[1]
            found, unknown = [], []
            for column in columns:  # one index array alive at a time: the memory in flight stays small
                index = column if base is None else base + column
                found.append(table.reshape(-1).take(index))
                if missing and found[-1].min(initial=0) == UNKNOWN:  # UNKNOWN is the least entry
                    unknown.append(index[found[-1] == UNKNOWN])
            return found, unknown

        return [take(pieces[0])] if share is None else share.map(take, pieces)

    def append(self, app: np.ndarray, lids: np.ndarray) -> np.ndarray:
        """Local `lids` with what `app` stands for appended (app 0: nothing)."""
        engine = self.engine
        return self.lookup(self.appended, lambda: (len(engine.appends), len(engine.locals)), app, lids,
                           lambda a, lid, _checked=None: lid if a == 0 else engine.append_to(a, lid), ("append",))

    def projections(self, name: str, G: np.ndarray) -> np.ndarray | None:
        """Per row, the id of what local action `name` reads of the globals (None: it reads none)."""
        engine = self.engine
        if not engine.local_reads[name]:
            return None
        of = engine.projection_of[name]
        table = self.projection[name]
        known = getattr(table, "known", 0)
        if known < len(of):
            array = table.ensure(len(of))
            array[known:len(of)] = of[known:]
            table.known = len(of)
        return table.array[G].astype(np.int64)

    def local_step(self, name: str, projection: np.ndarray | None, lids: np.ndarray) -> np.ndarray:
        """The next local after `name` from `lids` under `projection`, -1 where disabled."""
        engine = self.engine
        rows = engine.local_memos[name]

        def compute(proj: int, lid: int, next_local=UNEVALUATED) -> int:
            value = rows[proj][lid]
            return engine.local_successor(name, lid, proj, next_local) if value is None else value

        return self.lookup(self.local[name], lambda: (len(engine.projections[name]), len(engine.locals)),
                           projection, lids, compute, ("local", name))

    def wide_step(self, wide: int, G: np.ndarray, lids: np.ndarray):
        """A wide instance per row: (enabled, next globals, next local, append id to the others)."""
        engine = self.engine
        pairs = G.astype(np.int64) * (1 << 32) + lids
        keys, rows = self.wide.get(wide, (np.zeros(0, np.int64), np.zeros((0, 3), np.int64)))
        position = np.searchsorted(keys, pairs)
        hit = position < len(keys)
        hit[hit] = keys[position[hit]] == pairs[hit]
        if not hit.all():
            new = sorted_unique(pairs[~hit])
            computed = []
            for pair in new.tolist():
                g, lid = divmod(pair, 1 << 32)
                found = engine.wide_memo.get((wide, g, lid), 0)
                if found == 0:
                    found = engine.wide_successor(wide, g, lid)
                computed.append((-1, -1, -1) if found is None else found)
            keys = np.concatenate([keys, new])
            rows = np.concatenate([rows, np.array(computed, dtype=np.int64).reshape(-1, 3)])
            order = np.argsort(keys, kind="stable")
            keys, rows = keys[order], rows[order]
            self.wide[wide] = (keys, rows)
            position = np.searchsorted(keys, pairs)
        found = rows[position]
        return found[:, 0] >= 0, found[:, 0], found[:, 1], found[:, 2]


# The bits a key word holds, and the most words a key takes: past WORDS * WORD bits the
# vector engine refuses the model (`WideKeys`). Tests narrow WORD to reach the multiword
# keys on small models.
WORD = 64
WORDS = 3


class KeyLayout:
    """How a key packs the component ids into one uint64: `local_bits` per process, the
    globals above. `KeyLayout.of` gives this layout where the ids fit one word, else a
    `WideLayout` of two or three words with the same operations."""

    words = 1
    dtype = np.dtype(np.uint64)

    def __init__(self, P: int, global_bits: int, local_bits: int):
        self.P, self.global_bits, self.local_bits = P, global_bits, local_bits
        self.bits = global_bits + P * local_bits
        if self.bits > WORD:
            raise WideKeys(f"the keys need {self.bits} bits ({global_bits} for the globals, "
                           f"{local_bits} per process), more than one machine word")
        self.shifts = [np.uint64(p * local_bits) for p in range(P)]
        self.global_shift = np.uint64(P * local_bits)
        self.local_mask = np.uint64((1 << local_bits) - 1)

    @staticmethod
    def of(P: int, global_bits: int, local_bits: int) -> "KeyLayout":
        """The one-word layout where the ids fit one word, else the multiword one."""
        if global_bits + P * local_bits <= WORD:
            return KeyLayout(P, global_bits, local_bits)
        return WideLayout(P, global_bits, local_bits)

    @classmethod
    def fitting(cls, P: int, globals_: int, locals_: int, at_least: "KeyLayout | None" = None) -> "KeyLayout":
        global_bits, local_bits = max(globals_.bit_length(), 1), max(locals_.bit_length(), 1)
        if at_least is not None:
            global_bits = max(global_bits, at_least.global_bits)
            local_bits = max(local_bits, at_least.local_bits)
        return cls.of(P, global_bits, local_bits)

    def same(self, other: "KeyLayout") -> bool:
        return (self.global_bits, self.local_bits) == (other.global_bits, other.local_bits)

    def encode(self, G: np.ndarray, L: Sequence[np.ndarray]) -> np.ndarray:
        key = G.astype(np.uint64) << self.global_shift
        for p in range(self.P):
            key |= L[p].astype(np.uint64) << self.shifts[p]
        return key

    def decode(self, keys: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        G = (keys >> self.global_shift).astype(np.int64)
        L = [((keys >> self.shifts[p]) & self.local_mask).astype(np.int64) for p in range(self.P)]
        return G, L

    def ids(self, key) -> tuple[int, list[int]]:
        """One key's globals id and locals ids, in Python ints (a numpy call per key costs more)."""
        key, mask = int(key), (1 << self.local_bits) - 1
        return key >> int(self.global_shift), [(key >> int(shift)) & mask for shift in self.shifts]

    def flip(self, keys: np.ndarray, p: int, old: np.ndarray, new: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """`keys[rows]` with process p's locals `old` replaced by `new` (only its bits change)."""
        moved = (old[rows] ^ new[rows]).astype(np.uint64)
        moved <<= self.shifts[p]
        moved ^= keys[rows]
        return moved

    def rekey(self, keys: np.ndarray, to: "KeyLayout") -> np.ndarray:
        """`keys` under layout `to`; sorted keys stay sorted."""
        if self.same(to):
            return keys
        return to.encode(*self.decode(keys))


class WideLayout(KeyLayout):
    """A key of two or three words, as one unstructured numpy void of 8 bytes per word:
    the words big-endian, the most significant first, so that numpy's byte-wise order
    of voids (sort, searchsorted, equality) is the order of the number they spell. The
    ids are laid out from the top as in one word (the globals', then process P-1's
    down to process 0's), none split between words, so that the order stays the
    lexicographic order of the ids and re-keying keeps sorted keys sorted. The bits
    left at the bottom of the last word carry a successor's position while a level
    is sorted, where it fits (else a word is added for it)."""

    def __init__(self, P: int, global_bits: int, local_bits: int):
        self.P, self.global_bits, self.local_bits = P, global_bits, local_bits
        self.bits = global_bits + P * local_bits
        places, word, free = [], 0, WORD
        for width in [global_bits] + [local_bits] * P:  # the globals, then process P-1 .. 0
            if width > free:
                word, free = word + 1, WORD
            free -= width
            places.append((word, np.uint64(max(free, 0))))
        self.words = word + 1
        if self.words > WORDS or max(global_bits, local_bits) > WORD:  # a word fewer than one id needs
            raise WideKeys(f"the keys need {self.bits} bits ({global_bits} for the globals, "
                           f"{local_bits} per process), and the vector engine's keys hold at most "
                           f"{WORDS} words of {WORD} bits, no id split between two")
        self.room = free  # the bits free at the bottom of the last word
        self.dtype = np.dtype(f"V{8 * self.words}")
        self.global_place, self.local_places = places[0], places[1:][::-1]  # local_places[p]: process p's
        self.global_mask, self.local_mask = np.uint64((1 << global_bits) - 1), np.uint64((1 << local_bits) - 1)

    def words_of(self, keys: np.ndarray) -> np.ndarray:
        """The keys' words, one row per key (a view: writing it writes the keys)."""
        return keys.view(">u8").reshape(len(keys), self.words)

    def encode(self, G: np.ndarray, L: Sequence[np.ndarray]) -> np.ndarray:
        words = np.zeros((len(G), self.words), dtype=np.uint64)
        for (word, shift), ids in zip([self.global_place, *self.local_places], [G, *L]):
            words[:, word] |= ids.astype(np.uint64) << shift
        return words.astype(">u8").view(self.dtype).reshape(len(G))

    def decode(self, keys: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        words = self.words_of(keys)

        def field(place, mask) -> np.ndarray:
            word, shift = place
            return ((words[:, word].astype(np.uint64) >> shift) & mask).astype(np.int64)

        return field(self.global_place, self.global_mask), [field(place, self.local_mask)
                                                             for place in self.local_places]

    def ids(self, key) -> tuple[int, list[int]]:
        number = int.from_bytes(bytes(key), "big")

        def field(place, bits: int) -> int:  # each word takes 64 bits of the number, whatever WORD says
            word, shift = place
            return (number >> (64 * (self.words - 1 - word) + int(shift))) & ((1 << bits) - 1)

        return field(self.global_place, self.global_bits), [field(place, self.local_bits)
                                                             for place in self.local_places]

    def flip(self, keys: np.ndarray, p: int, old: np.ndarray, new: np.ndarray, rows: np.ndarray) -> np.ndarray:
        word, shift = self.local_places[p]
        flipped = keys[rows]
        words = self.words_of(flipped)
        words[:, word] ^= (old[rows] ^ new[rows]).astype(np.uint64) << shift
        return flipped

    def first_occurrences(self, keys: np.ndarray, positions: np.ndarray, record_edges: bool):
        """`Search.first_occurrences` for these keys: one sort of the keys with each
        one's position below it (in the last word's free bits, or in a word added);
        for two words, where it fits, one machine-word sort of the first word's rank
        and the second word's ids (`ranked`: several times faster than a byte-wise one)."""
        total, index_bits = len(keys), max(len(keys) - 1, 1).bit_length()
        ranked = self.ranked(keys, positions, index_bits) if self.words == 2 else None
        if ranked is not None:
            unique, first, sorted_positions, starts = ranked
            return unique, first, [(sorted_positions, starts, None)] if record_edges else None
        inside = index_bits <= self.room
        words = self.words + (not inside)
        tagged = np.zeros((total, words), dtype=">u8")
        tagged[:, :self.words] = self.words_of(keys)
        tagged[:, -1] |= positions.astype(np.uint64)
        tagged = tagged.view(f"V{8 * words}").reshape(total)
        tagged.sort()
        tagged_words = tagged.view(">u8").reshape(total, words)
        if inside:
            low = np.uint64((1 << index_bits) - 1)
            sorted_positions = (tagged_words[:, -1] & low).astype(np.int64)
            tagged_words[:, -1] &= ~low
        else:
            sorted_positions = tagged_words[:, -1].astype(np.int64)
        sorted_keys = np.ascontiguousarray(tagged_words[:, :self.words]).view(self.dtype).reshape(total)
        starts = run_starts(sorted_keys)
        return sorted_keys[starts], sorted_positions[starts], [(sorted_positions, starts, None)] if record_edges else None

    def ranked(self, keys: np.ndarray, positions: np.ndarray, index_bits: int):
        """Two-word keys sorted as one uint64 each: the rank of the first word among the
        distinct first words (an argsort of them), then the second word's ids, then the
        position; ranks are ordered as the words, so the order is the keys'. (distinct
        keys, first position of each, the positions sorted, where each run starts), or
        None where the rank, ids and positions do not fit 64 bits."""
        words = self.words_of(keys)
        first_words = words[:, 0].astype(np.uint64)
        order = np.argsort(first_words)
        sorted_first = first_words[order]
        first_starts = run_starts(sorted_first)
        distinct_first = sorted_first[first_starts]
        field_bits = WORD - self.room  # the ids in the second word, above its free bits
        rank_bits = max(len(distinct_first) - 1, 1).bit_length()
        if rank_bits + field_bits + index_bits > 64:
            return None
        rank = np.empty(len(keys), dtype=np.uint64)
        rank[order] = np.cumsum(first_starts) - 1
        del order, sorted_first, first_words
        combined = rank << np.uint64(field_bits + index_bits)
        combined |= (words[:, 1].astype(np.uint64) >> np.uint64(self.room)) << np.uint64(index_bits)
        combined |= positions.astype(np.uint64)
        combined.sort()
        sorted_positions = (combined & np.uint64((1 << index_bits) - 1)).astype(np.int64)
        heads = combined >> np.uint64(index_bits)
        starts = run_starts(heads)
        distinct = heads[starts]
        unique = np.empty((len(distinct), 2), dtype=">u8")
        unique[:, 0] = distinct_first[(distinct >> np.uint64(field_bits)).astype(np.int64)]
        unique[:, 1] = (distinct & np.uint64((1 << field_bits) - 1)) << np.uint64(self.room)
        return unique.view(self.dtype).reshape(len(distinct)), sorted_positions[starts], sorted_positions, starts


def place_piece(piece: tuple, ids: np.ndarray, targets: np.ndarray) -> None:
    """One piece of `first_occurrences` (positions in key order, where each run of one key
    starts, the index of each run's key or None, and optionally where its positions
    start in `targets`) written into `targets`: each run's positions get its key's id."""
    sorted_positions, starts, which, *start = piece
    lengths = np.diff(np.append(np.flatnonzero(starts), len(sorted_positions)))
    into = targets[start[0]:] if start else targets
    into[sorted_positions] = np.repeat(ids if which is None else ids[which], lengths)


def state_ids(ids: np.ndarray) -> np.ndarray:
    """State ids as kept beside the keys seen: 4 bytes each while they fit (with liveness
    the graph's 10^8 states would otherwise spend a gigabyte on the high halves)."""
    return ids.astype(np.int32) if not len(ids) or ids.max() < 2**31 else ids


def sorted_runs(combined: np.ndarray, index_bits: int, record_edges: bool):
    """Keys with their positions in the low `index_bits` bits, sorted in place: (the
    distinct keys, the first position of each, every position in key order where edges
    are recorded (else None), where each run of one key starts). The positions are
    taken out in place: `combined` is overwritten."""
    combined.sort()
    shift, low = np.uint64(index_bits), np.uint64((1 << index_bits) - 1)
    heads = combined >> shift
    starts = run_starts(heads)
    unique = heads[starts]
    first = (combined[starts] & low).astype(np.int64)
    sorted_positions = np.bitwise_and(combined, low, out=combined).view(np.int64) if record_edges else None
    return unique, first, sorted_positions, starts


def run_starts(sorted_keys: np.ndarray) -> np.ndarray:
    """Per position of sorted keys, whether a run of equal keys starts there."""
    starts = np.ones(len(sorted_keys), dtype=bool)
    if len(sorted_keys) and sorted_keys.dtype.kind == "V":  # multiword keys: no ufunc, the operator
        starts[1:] = sorted_keys[1:] != sorted_keys[:-1]
    elif len(sorted_keys):
        np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=starts[1:])
    return starts


def merge_into(a, a_ids, b, b_ids, keys: np.ndarray, ids: np.ndarray | None) -> None:
    """Write the sorted runs `a` and `b` (no key in common) merged into `keys` (their ids,
    where given, into `ids`)."""
    if ids is None:
        keys[:len(a)], keys[len(a):] = a, b
        keys.sort(kind="stable")  # two sorted runs: timsort merges them in linear time
        return
    if keys.dtype == np.uint64 and max(a[-1] if len(a) else 0, b[-1] if len(b) else 0) < TOP_BIT:
        return merge_marked(a, a_ids, b, b_ids, keys, ids)
    at = np.searchsorted(a, b) + np.arange(len(b))  # where b's keys land in the merge
    from_a = np.ones(len(keys), dtype=bool)
    from_a[at] = False
    keys[at], ids[at] = b, b_ids
    keys[from_a], ids[from_a] = a, a_ids


TOP_BIT = np.uint64(1 << 63)
LOW_BYTE = 0 if sys.byteorder == "little" else 7  # of a uint64, in memory


def merge_marked(a, a_ids, b, b_ids, keys: np.ndarray, ids: np.ndarray) -> None:
    """`merge_into` with ids, for one-word keys whose top bit is free: each key shifted up
    a bit and b's marked in the bit freed, the two runs merged as without ids (the marks
    keep the order, no key being in both), the marks read off where the ids go: 0.36 s
    for 16 and 8 million keys, against 0.59 s by binary searches (4 times the merge of
    the keys alone, the largest cost edges added to the search)."""
    one = np.uint64(1)
    head, tail = keys[:len(a)], keys[len(a):]
    np.left_shift(a, one, out=head)
    np.left_shift(b, one, out=tail)
    tail |= one
    keys.sort(kind="stable")
    from_b = (keys.view(np.uint8)[LOW_BYTE::8] & 1).view(bool)
    keys >>= one
    ids[from_b] = b_ids
    ids[~from_b] = a_ids


class SortedKeys:
    """The keys seen, as a few sorted runs of geometrically shrinking sizes (with each key's
    state id, when edges are recorded): adding a level's keys merges only the runs its
    size reaches, so a key is copied a few times over the search, not once per level."""

    def __init__(self, keys: np.ndarray, ids: np.ndarray | None):
        self.runs = [(keys, ids)]

    def __len__(self) -> int:
        return sum(len(keys) for keys, _ in self.runs)

    def find(self, unique: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Per key of the sorted `unique`, whether it was seen, and its id (-1 where not)."""
        runs = self.runs  # read once: threads.py may put merged runs in its place meanwhile
        known = np.zeros(len(unique), dtype=bool)
        ids = None if runs[0][1] is None else np.full(len(unique), -1, dtype=np.int64)
        for keys, run_ids in runs:
            if not len(keys):
                continue
            where = np.searchsorted(keys, unique)
            np.minimum(where, len(keys) - 1, out=where)  # past the end: compared with the last, unequal
            hit = keys[where] == unique
            known |= hit
            if ids is not None:
                ids[hit] = run_ids[where[hit]]
        return known, ids

    def add_from(self, size: int, make: Callable[[], tuple]) -> None:
        """Add the `size` keys (and ids) `make()` gives (threads.py makes a large one beside)."""
        self.add(*make())

    def add(self, keys: np.ndarray, ids: np.ndarray | None) -> None:
        """Add the sorted `keys` (none seen before)."""
        self.runs = [*self.runs, (keys, ids)]
        self.compact()

    def compact(self) -> None:
        """Merge the last runs while the last is at least half the one before. Each merge
        puts a new list of runs in place of the old one, never changing a list: a thread
        finding keys meanwhile reads the one or the other, each of them whole."""
        runs = self.runs
        while len(runs) > 1 and 2 * len(runs[-1][0]) >= len(runs[-2][0]):
            (a, a_ids), (b, b_ids) = runs[-2], runs[-1]
            runs = self.runs = [*runs[:-2], self.merged(a, a_ids, b, b_ids)]

    def merged(self, a, a_ids, b, b_ids) -> tuple[np.ndarray, np.ndarray | None]:
        """Two sorted runs with no key in common (and their ids, or None) as one."""
        keys = np.empty(len(a) + len(b), dtype=a.dtype)
        ids = None if a_ids is None else np.empty(len(keys), dtype=np.result_type(a_ids, b_ids))
        merge_into(a, a_ids, b, b_ids, keys, ids)
        return keys, ids

    def rekey(self, old: "KeyLayout", new: "KeyLayout") -> None:
        self.runs = [(old.rekey(keys, new), ids) for keys, ids in self.runs]


class Level:
    """One breadth-first level: its states' keys in id order (under `layout`), where
    each came from (the parent's position in the previous level, the label id of
    the step) and, with edges recorded, each state's successors in order."""

    __slots__ = ("offset", "keys", "layout", "parent", "via", "degree", "targets", "labels")

    def __init__(self, offset, keys, layout, parent=None, via=None):
        self.offset, self.keys, self.layout, self.parent, self.via = offset, keys, layout, parent, via
        self.degree = self.targets = self.labels = None

    def __len__(self) -> int:
        return len(self.keys)


class Slice:
    """States `start`..`stop` of a level, expanded together: what `Search.expand` reads of
    a level (its keys, layout, the id of its first state), and the edges it records."""

    def __init__(self, level: Level, start: int, stop: int):
        self.start, self.offset = start, level.offset + start
        self.keys, self.layout = level.keys[start:stop], level.layout
        self.degree = self.targets = self.labels = None

    def __len__(self) -> int:
        return len(self.keys)


def joined(pieces: list, offset: int) -> Level:
    """The level made of the new states `pieces` found, [(keys, layout, parent, via, weight)]
    in id order: the keys under the last (widest) layout."""
    layout = pieces[-1][1]
    keys = np.concatenate([piece_layout.rekey(keys, layout) for keys, piece_layout, *_ in pieces])
    return Level(offset, keys, layout, np.concatenate([piece[2] for piece in pieces]),
                 np.concatenate([piece[3] for piece in pieces]))


class VectorExploration(ReducedLiveness, Exploration):
    """The `Run` of a vector search (engine/interface.py): the same ids, parents, edges
    and violations as the packed engine's, the states stored as keys per level; under
    symmetry, liveness as the packed engine decides it (`ReducedLiveness`), on arrays."""

    def __init__(self, engine: Engine):
        super().__init__()
        self.engine = engine
        self.levels: list[Level] = []
        self.states = self.index = None  # kept as keys, per level: see `state`
        self.labels = list(engine.labels)
        self.decode = engine.decode  # paths store the packed engine's ints
        self.reduction = None  # with symmetry: symmetry.Permutations (labels carry the permutation)
        self.level_weights: list[int] = []  # with symmetry: per level, the states its representatives stand for
        self.weighted_transitions = 0
        self.parts = {}  # CPU seconds per part of the search and of liveness, for `bench`
        self._edges = None
        self._graph = None  # the graph liveness is decided on, once built
        self._alone = False  # whether one liveness property is decided on it (with threads)
        self._share = None  # with threads, what shares the graph's frontiers while liveness is decided
        self._probes = None  # the states the leads-to sides are evaluated on, shared by the properties
        self.workers = 1  # the threads that shared the search (threads.py)
        self.helpers = None  # with threads and edges kept: the search's helper processes, kept for liveness
        self._close_helpers = None
        self.helper_peak_bytes: list[int] = []  # with threads: each helper process's peak, once it ended
        self.overlapped = 0.0  # the CPU seconds they spent beside the longest (threads.Share)

    @property
    def distinct_states(self) -> int:
        return sum(len(level) for level in self.levels)

    def coverage(self, actions=None) -> dict:
        """Per action (interface.Run.coverage), from each level's labels: of the step that found
        each state first, and of every edge where they were kept."""
        from protocol.engine.interface import coverage_by_action

        if self.reduction is not None:
            raise Unavailable("under symmetry a state stands for its orbit: give --coverage without --symmetry")
        count = len(self.labels)
        found = np.zeros(count, dtype=np.int64)
        taken = np.zeros(count, dtype=np.int64) if self.edges_recorded else None
        for level in self.levels:
            if level.via is not None:
                found += np.bincount(level.via, minlength=count)[:count]
            for part in (level.labels or ()) if taken is not None else ():
                taken += np.bincount(part, minlength=count)[:count]
        if taken is not None and self._edges is not None:  # the edges joined for liveness
            taken += np.bincount(self._edges[1], minlength=count)[:count]
        return coverage_by_action(self.labels, found.tolist(), None if taken is None else taken.tolist(),
                                  actions or self.labels)

    # ------------------------------------------------ states, paths, traces

    def locate(self, state_id: int) -> tuple[Level, int]:
        starts = [level.offset for level in self.levels]
        k = int(np.searchsorted(starts, state_id, side="right")) - 1
        return self.levels[k], state_id - self.levels[k].offset

    def packed_state(self, key: int, layout: KeyLayout) -> int:
        """The packed engine's int for the state of `key` (what paths store)."""
        g, local_ids = layout.ids(key)
        return self.engine.pack(g, local_ids)

    def readable_state(self, key: int, layout: KeyLayout):
        return self.engine.decode(self.packed_state(key, layout))

    def state(self, state_id: int):
        return self.engine.decode(self.packed_of(state_id))

    def packed_of(self, state_id: int) -> int:
        """The packed engine's int for state `state_id`."""
        level, position = self.locate(state_id)
        return self.packed_state(level.keys[position], level.layout)

    def stored_path(self, state_id: int) -> list:
        """The path the search stored to `state_id`: [(label or None, the packed engine's
        int)], decoded by `decode` (or realised, under symmetry, by `realize`)."""
        level, position = self.locate(state_id)
        k = self.levels.index(level)
        steps = []
        while k > 0:
            steps.append((self.labels[int(level.via[position])],
                          self.packed_state(level.keys[position], level.layout)))
            position = int(level.parent[position])
            k -= 1
            level = self.levels[k]
        steps.append((None, self.packed_state(level.keys[position], level.layout)))
        steps.reverse()
        return steps

    @property
    def parent(self) -> np.ndarray:
        """Per state id, its parent's id (-1 for the initial state)."""
        parts = [np.full(len(self.levels[0]), -1, dtype=np.int64)] if self.levels else []
        for previous, level in zip(self.levels, self.levels[1:]):
            parts.append(previous.offset + level.parent.astype(np.int64))
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    @parent.setter
    def parent(self, value):  # Exploration.__init__ sets it; this run derives it
        pass

    @property
    def via(self) -> list:
        out = [None] * (len(self.levels[0]) if self.levels else 0)
        for level in self.levels[1:]:
            out += [self.labels[label] for label in level.via.tolist()]
        return out

    @via.setter
    def via(self, value):
        pass

    # --------------------------------------------------------------- edges

    def edge_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The recorded edges in the packed engine's order: (offsets, labels, destinations).
        Gathered once from the levels, which then let go of theirs (memory stays near one copy)."""
        if self._edges is None:
            started = time.process_time()
            levels = [level for level in self.levels if level.degree]  # each a list, one array per slice
            n = self.distinct_states
            offsets = np.zeros(n + 1, dtype=np.int64)
            total = sum(len(part) for level in levels for part in level.targets)
            targets = np.empty(total, dtype=levels[0].targets[0].dtype if levels else np.int32)
            labels = np.empty(total, dtype=levels[0].labels[0].dtype if levels else np.uint8)
            done, after = 0, 1
            for level in levels:  # consecutive from the first; only the last may be cut short
                degree = np.concatenate(level.degree)
                np.cumsum(degree, out=offsets[level.offset + 1:level.offset + 1 + len(degree)])
                offsets[level.offset + 1:level.offset + 1 + len(degree)] += done
                for part_targets, part_labels in zip(level.targets, level.labels):
                    end = done + len(part_targets)
                    self.copied(targets[done:end], part_targets)
                    self.copied(labels[done:end], part_labels)
                    done = end
                level.degree = level.targets = level.labels = None
                after = level.offset + 1 + len(degree)
            offsets[after:] = done  # states not expanded (a cut search) have no edges
            self._edges = (offsets, labels, targets)
            self.parts["liveness:graph"] = self.parts.get("liveness:graph", 0.0) + time.process_time() - started
        return self._edges

    def copied(self, into: np.ndarray, source: np.ndarray) -> None:
        """`into[:] = source`; while liveness is decided with threads, a range per thread."""
        share = self._share
        if share is None or len(source) < SHARED_COPY:
            into[:] = source
            return

        def piece(span: tuple[int, int]) -> None:
            into[span[0]:span[1]] = source[span[0]:span[1]]

        share.map(piece, share.spans(len(source)))

    @property
    def edge_src(self):
        offsets, _, _ = self.edge_arrays()
        return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))

    @edge_src.setter
    def edge_src(self, value):
        pass

    @property
    def edge_label(self):
        return self.edge_arrays()[1]

    @edge_label.setter
    def edge_label(self, value):
        pass

    @property
    def edge_dst(self):
        return self.edge_arrays()[2]

    @edge_dst.setter
    def edge_dst(self, value):
        pass

    # ------------------------------------------------------------ liveness

    def components(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """Per state id, its globals' id and each process's locals' id."""
        G, L = [], [[] for _ in range(self.engine.P)]
        for _, g, locals_ in self.level_components():
            G.append(g)
            for p, column in enumerate(locals_):
                L[p].append(column)
        return np.concatenate(G), [np.concatenate(column) for column in L]

    def level_components(self):
        """Per level: (the id of its first state, its states' globals' ids, each process's
        locals' ids), decoded a level at a time."""
        for level in self.levels:
            yield (level.offset, *level.layout.decode(level.keys))

    def initial_ids(self) -> list[int]:
        return list(range(len(self.levels[0])))

    # ------------------------------------------------------- the Run interface

    def counts(self) -> Counts:
        if self.reduction is not None:  # the unreduced counts, from the orbits' sizes
            return Counts(sum(self.level_weights), self.weighted_transitions, self.depth, self.distinct_states,
                          tuple(self.level_weights))
        return Counts(self.distinct_states, self.transitions, self.depth, None,
                      tuple(len(level) for level in self.levels))

    def report(self) -> dict:
        """With threads: the `parallel` figures a partitioned search gives, nothing exchanged."""
        if self.workers == 1 or self.interrupted:
            return {}
        return {"parallel": {"workers": self.workers, "threads": True, "bytes_exchanged": 0,
                             "worker_peak_bytes": list(self.helper_peak_bytes), "graph_gathered": False,
                             "level_sizes": [len(level) for level in self.levels],
                             "overlapped_cpu_seconds": round(self.overlapped, 2)}}

    def level_states(self, level: Level):
        """The readable states of `level`, in id order."""
        G, L = level.layout.decode(level.keys)
        engine, columns = self.engine, [column.tolist() for column in L]
        for i, g in enumerate(G.tolist()):
            yield engine.assemble(engine.globals[g], [engine.locals[column[i]] for column in columns])

    def decoded_states(self):
        return (state for level in self.levels for state in self.level_states(level))

    def first_reached(self, predicates: dict) -> dict:
        found = dict.fromkeys(predicates)
        looking = dict(predicates)
        for depth, level in enumerate(self.levels, start=1):
            for state in self.level_states(level):
                for name in [name for name, holds in looking.items() if holds(state)]:
                    found[name] = depth
                    del looking[name]
                if not looking:
                    return found
        return found

    def find_violation(self, graph, initial, masks, name: str, pairs):
        if self.reduction is None:
            return graph.find_violation(initial, masks)
        return self.reduced_violation(
            lambda symmetry: graph.find_violation_reduced(initial, masks, symmetry), name, pairs)

    def lasso_steps(self, lasso) -> tuple[list, object]:
        if self.reduction is None:
            return super().lasso_steps(lasso)
        return self.realized_lasso(lasso, self.packed_of)

    def premises_reached(self, name: str, pairs, masks) -> tuple:
        """Per pair, whether its premise holds in some state: as the masks found it where
        they were evaluated per component, else a trigger, else some decoded state."""
        reached = list(masks.premised())
        unsettled = [i for i, found in enumerate(reached) if found is None]
        if unsettled:
            found = any_premise(self.decoded_states(), [pairs[i] for i in unsettled], [(b"", b"")] * len(unsettled))
            for i, answer in zip(unsettled, found):
                reached[i] = answer
        return tuple(reached) if self.reduction is None else self.orbit_premises(name, pairs, tuple(reached))

    def decide_liveness(self, model: Model) -> dict:
        """With threads, the liveness properties not settled in place decided side by side
        (each on the one graph; numpy's sorts and gathers let go of the interpreter's lock);
        the probe states the properties shared (`probes`) are let go after."""
        try:
            return self._decide_liveness(model)
        finally:
            self._probes = None
            self.close()  # the helpers, once the sides they evaluate are known

    def keep_helpers(self, helpers) -> None:
        """Keep the search's helper processes to evaluate the leads-to sides (helpers.py)
        until the liveness decision or `close`; a run dropped before either ends them too."""
        self.helpers = helpers
        self._close_helpers = weakref.finalize(self, helpers.close)

    def close(self) -> None:
        """End the helper processes kept for deciding liveness, if any."""
        self.helpers = None
        if self._close_helpers is not None:
            self._close_helpers()  # once: a finalizer runs at most once

    def _decide_liveness(self, model: Model) -> dict:
        if self.workers == 1 or not self.liveness_decidable:
            return super().decide_liveness(model)
        from protocol.engine.interface import Liveness
        from protocol.engine.vector.sharing import Share, beside_one_another, side_by_side

        verdicts, open_ = {}, []
        for name, pairs in model.liveness.items():
            settled = self.holds_in_place(name, pairs)
            if settled is None:
                open_.append((name, pairs))
            else:
                verdicts[name] = Liveness(True, premises=settled)
        if open_:
            # one property alone takes its masks while the cycles are found; of several, those
            # whose decision will want them whatever the cycles (`needs_masks`)
            self._alone = len(open_) == 1
            share = self._share = Share(self.workers)  # the cycles' frontiers, a part per thread
            try:
                graph, initial = self.fair_graph(model), self.initial_ids()
                self.probes()  # made before the threads share it
                # the search's batches are done: what the helpers spend from here is the sides'
                helped = 0.0 if self.helpers is None else self.helpers.cpu
                decided, spent = side_by_side(
                    [lambda name=name, pairs=pairs: self.decided(graph, initial, name, pairs) for name, pairs in open_])
            finally:
                self._share = None
                share.close()
            # the thread that found the cycles, and the helpers, ran beside the properties' threads
            spent.append(graph.cycles_beside_seconds)
            if self.helpers is not None:
                spent.append(self.helpers.cpu - helped)
            self.overlapped += beside_one_another(spent, self.workers) + share.overlapped
            verdicts.update(zip([name for name, _ in open_], decided))
        return {name: verdicts[name] for name in model.liveness}

    def fair_graph(self, model: Model):
        from protocol.engine.vector.liveness import VectorGraph

        offsets, labels, targets = self.edge_arrays()
        family_of = {instance.label: instance.family for instance in model.instances}
        graph = VectorGraph(offsets, labels, targets, model.fair_families,
                            [family_of.get(label) for label in self.labels], parts=self.parts, share=self._share,
                            cycles_beside=self.workers > 1)  # while this thread takes the leads-to masks
        self._graph = graph
        return graph

    def pair_masks(self, name: str, pairs):
        from protocol.engine.vector.liveness import LeadsToMasks

        self.note_per_state(name, pairs)
        masks = LeadsToMasks(self, pairs, self.parts, self.probes(), name)  # computed as far as the decision needs them
        graph = self._graph
        if graph is not None and graph.finding_cycles and (self._alone or self.needs_masks(graph, masks)):
            masks.arrays()  # all of them, while the cycles are found beside: the decision wants them
        return masks

    def probes(self):
        """The one `Probes` of this run's properties (made when first asked)."""
        from protocol.engine.vector.liveness import Probes

        if self._probes is None:
            self._probes = Probes(self.engine, self.helpers)
        return self._probes

    @staticmethod
    def needs_masks(graph, masks) -> bool:
        """Whether `find_violation` will want every mask whatever the cycles: it does once a
        conclusion fails in a state that stutters (there a stall may last), which is told
        on those few states alone, before the cycles are known."""
        return any(masks.unmet_in(np.flatnonzero(graph.stutters())))

    def note_per_state(self, name: str, pairs) -> None:
        """Say, in the engine choice (`--json`, `bench`), which liveness properties are
        evaluated on every state because a pair cannot be evaluated per component."""
        from protocol.engine.vector.liveness import per_state_reason

        why = next((f"{pair.text}: {reason}" for pair in pairs if (reason := per_state_reason(pair))), None)
        if why is not None and self.engine_choice is not None:
            self.engine_choice.setdefault("liveness_per_state", {})[name] = why


def vector_refusal(model: Model, fingerprints: bool = False) -> str | None:
    """Why the vector engine cannot explore `model` so, or None when it can (symmetry
    and liveness it runs on every model it explores)."""
    if fingerprints:
        return "fingerprints are the packed engine's (--fingerprints)"
    if len(model.initial_states) != 1:
        return "the model has more than one initial state"
    late = controller_after_processes(model.instances)
    if late is not None:
        return (f"{late} (a controller instance) is listed after a process's instance, and the vector engine "
                "puts each state's controller successors first")
    return None


def controller_after_processes(instances) -> object | None:
    """The first controller instance enumerated after a local or wide one, or None (a
    whole instance may lie anywhere: whole.py)."""
    seen_process = False
    for instance in instances:
        if instance.footprint.kind in (LOCAL, WIDE):
            seen_process = True
        elif seen_process and instance.footprint.kind not in (WHOLE, EACH):
            return instance.label
    return None


class Laid(NamedTuple):
    """A slice's successors as `Search.lay_out` lays them out for the sort: their keys (with
    their positions in the low bits where `combined`, shifted by `shift`, else beside them
    in `positions`), labels, and per state of the slice its out-degree, where its steps
    start, and its locals' ids (`L`, per process)."""

    keys: np.ndarray
    positions: np.ndarray | None
    shift: np.uint64
    combined: bool
    labels: np.ndarray
    degree: np.ndarray
    row_start: np.ndarray
    total: int
    L: list


class Deduplicated(NamedTuple):
    """`Search.deduplicate`'s answer: the distinct successor keys sorted, the first
    position of each, the pieces that map every position to its key (see
    `first_occurrences`), whether each key was seen and its id (with edges recorded),
    and the successor keys in order where a transition property needs them."""

    unique: np.ndarray
    first: np.ndarray
    pieces: list | None
    known: np.ndarray
    known_ids: np.ndarray | None
    step_keys: np.ndarray | None


class Search:
    """The level loop of `explore_vector`, with its state: the sorted keys seen."""

    clock = staticmethod(time.process_time)  # the CPU seconds the parts are timed by

    def __init__(self, run, engine, max_states, stop_on_violation, record_edges, on_progress, started,
                 perms=None):
        self.run, self.engine, self.tables = run, engine, Tables(engine, run.parts)
        self.perms = perms  # with symmetry: the permutations, numbered as the packed engine numbers them
        if perms is not None:
            P = engine.P
            self.permutation_of = np.zeros(P ** P, dtype=np.int64)  # order (as base-P digits) -> its number
            for order, number in perms.number.items():
                self.permutation_of[sum(q * P ** i for i, q in enumerate(order))] = number
        self.weight = 0  # the states admitted stand for this many (their orbits' sizes; their count without symmetry)
        self.limit = max_states if max_states is not None else float("inf")
        self.stop_on_violation, self.record_edges = stop_on_violation, record_edges
        self.on_progress, self.started = on_progress, started
        self.P = engine.P
        # The controller's instances (before the first process instance), and the whole
        # and each instances wherever they lie: see whole.py.
        self.head = head_of(engine.order)
        self.wholes = {which[0]: instance_of(engine, *which) for kind, which in engine.order if kind == "whole"}
        self.instances = self._process_instances()
        self.state_checks = dict(engine.readable_invariants)
        # The invariants checked per pair of globals and one process's locals (Model.by_pair):
        # a verdict per pair of ids, in a table filled as pairs are met (1 holds, 0 fails).
        self.by_pair = {name: holds for name, holds in self.state_checks.items() if name in engine.model.by_pair}
        self.pair_tables = {name: Growing((64, 1024), UNKNOWN, np.int8) for name in self.by_pair}
        self.step_checks = dict(engine.readable_transitions)
        self.parts = run.parts
        self.pending = 0  # new states of the level being expanded, found by its slices so far

    def _process_instances(self) -> list:
        """(label id, kind, process, family, wide index) of each instance from the first
        process instance on, in order; a whole or each one as (label id, WHOLE, None,
        its whole.py instance, None). The ones before it are the controller's (`self.head`)."""
        out, wide = [], 0
        for kind, which in self.engine.order[len(self.head):]:
            if kind == "whole":
                out.append((which[0], WHOLE, None, self.wholes[which[0]], None))
                continue
            label_id, _step, kind, p, family = self.engine.process_order[which]
            out.append((label_id, kind, p, family, wide if kind == WIDE else None))
            if kind == WIDE:
                wide += 1
        return out

    @property
    def count(self) -> int:
        """States admitted so far: the levels stored and this level's slices done."""
        return self.run.distinct_states + self.pending

    def timed(self, part: str, since: float) -> float:
        now = self.clock()
        self.parts[part] = self.parts.get(part, 0.0) + now - since
        return now

    def woken(self, checks: dict) -> list:
        """The properties to call on every state (step) now: those not checked per
        component, and those whose component watch has filled."""
        engine, violations = self.engine, self.run.violations
        return [(name, holds) for name, holds in checks.items()
                if name not in violations and name not in self.by_pair
                and (name not in engine.by_component or engine.failures[name])]

    def new_seen(self, keys: np.ndarray, ids: np.ndarray | None) -> SortedKeys:
        """The store of the keys seen, starting with `keys` (and their ids)."""
        return SortedKeys(keys, ids)

    def levels(self) -> None:
        run, engine = self.run, self.engine
        layout = KeyLayout.fitting(self.P, len(engine.globals), len(engine.locals))
        G0, L0 = engine.unpack(engine.initial)
        initial = layout.encode(np.array([G0]), [np.array([lid]) for lid in L0])
        run.levels.append(Level(0, initial, layout))
        self.layout = layout
        self.seen = self.new_seen(initial.copy(), np.zeros(1, dtype=np.int32) if self.record_edges else None)
        for name, holds in [*self.woken(self.state_checks), *self.by_pair.items()]:
            if not holds(run.state(0)):
                run.violations[name] = Violation(name, 0)
        run.depth, run.transitions, run.expanded = 1, 0, 0
        self.weight = 1  # the initial state is its own orbit (its processes start alike)
        run.level_weights.append(1)
        expanded_levels = []  # (level, its slices expanded): their edges, where recorded
        try:
            self.level_loop(expanded_levels)
        finally:  # Ctrl-C too: the slices done count, as the states they found
            if self.record_edges:
                self.edges_recorded()
                for level, expanded in expanded_levels:
                    done = [part for part in expanded if part.degree is not None]
                    level.degree = [part.degree for part in done]
                    level.targets = [part.targets for part in done]
                    level.labels = [part.labels for part in done]

    def level_loop(self, expanded_levels: list) -> None:
        """Expand level after level until none is new or the search is cut, each
        level's expanded slices appended to `expanded_levels` with it."""
        run = self.run
        cut = (self.stop_on_violation and bool(run.violations)) or 1 >= self.limit
        while not cut:
            level = run.levels[-1]
            offset, pieces, self.pending = level.offset + len(level), [], 0
            expanded = []
            expanded_levels.append((level, expanded))
            try:
                size = max(SLICE >> 2 * (level.layout.words - 1), 1)
                for start in range(0, len(level), size):
                    part = Slice(level, start, min(start + size, len(level)))
                    cut, piece = self.expand(part, offset + self.pending)
                    expanded.append(part)
                    if piece is not None:
                        pieces.append(piece)
                        self.pending += len(piece[0])
                    if cut:
                        break
            finally:  # Ctrl-C too: the slices done count, as the states they found
                if pieces:
                    run.levels.append(joined(pieces, offset))
                    run.level_weights.append(sum(piece[4] for piece in pieces))
                    run.depth += 1
                self.pending = 0
            if not pieces:  # a level with no new state: the search is over (or was cut in it)
                break
            if self.on_progress is not None:
                self.on_progress(Progress(run.distinct_states, run.depth, len(run.levels[-1]),
                                          time.perf_counter() - self.started))
        run.complete = not cut

    # ---------------------------------------------------------- one level

    def successors(self, level: Level):
        """Every successor of `level`'s states, through the tables: the controller's
        (row, label, next globals, next locals per process) and, per process instance
        in enumeration order, its enabled rows and their next local (and with a wide
        one, the next globals and the locals of the other processes)."""
        tables, P = self.tables, self.P
        G, L = level.layout.decode(level.keys)
        if self.head == [("memo", 0)]:  # the controller's instances are one memoised segment
            controller = self.controller_segment(G, L, 0)
        else:
            controller = head_successors(self.head, lambda segment: self.controller_segment(G, L, segment),
                                         self.engine, G, L, self.wholes, self.parts)
        blocks, projections = [], {}
        for label_id, kind, p, name, wide in self.instances:
            if kind == LOCAL:
                if name not in projections:
                    projections[name] = tables.projections(name, G)
                found = tables.local_step(name, projections[name], L[p])
                blocks.append((label_id, p, found >= 0, found, None))
            elif kind == WHOLE:
                enabled, g2, others = name.successors(self.engine, G, L, self.parts)
                blocks.append((label_id, p, enabled, None, (g2, others)))
            else:
                enabled, g2, nxt, app = tables.wide_step(wide, G, L[p])
                rows = np.flatnonzero(enabled)
                others = [nxt[rows] if q == p else tables.append(app[rows], L[q][rows]) for q in range(P)]
                blocks.append((label_id, p, enabled, nxt, (g2[rows], others)))
        return G, L, controller, blocks

    def controller_segment(self, G: np.ndarray, L: list, segment: int) -> tuple:
        """The rows' steps by controller segment `segment`: (count per row, label, next
        globals, next locals per process), in row order."""
        tables = self.tables
        count, start = tables.controller(G, segment)
        total = int(count.sum())
        first_of_row = np.cumsum(count) - count
        at = np.repeat(start - first_of_row, count) + np.arange(total)
        flat_label, flat_next, flat_append = tables.segments[segment].flat
        c_append = flat_append[at]
        return (count, flat_label[at], flat_next[at],
                [tables.append(c_append, np.repeat(L[p], count)) for p in range(self.P)])

    def expand(self, level: Slice, offset: int) -> tuple[bool, tuple | None]:
        """Expand a slice of a level, its new states getting ids from `offset`: (whether the
        search was cut, the new states as (keys, layout, parent, via, weight) or None)."""
        found = self.lookups(level)
        layout = self.widened_layout()
        laid = self.lay_out(level, layout, found)
        return self.admit(level, offset, layout, laid, self.deduplicate(laid, layout))

    def lookups(self, level: Slice):
        """`successors(level)`, timed: the table lookups ("tables") apart from the readable
        actions run to fill them ("components")."""
        clock = self.clock()
        filled = self.parts.get("components", 0.0)
        found = self.successors(level)
        self.timed("tables", clock)
        self.parts["tables"] -= self.parts.get("components", 0.0) - filled  # the lookups alone
        return found

    def widened_layout(self) -> KeyLayout:
        """The keys' layout, wide enough for every component interned so far (the keys
        seen re-keyed to it where it widened)."""
        engine = self.engine
        layout = KeyLayout.fitting(self.P, len(engine.globals), len(engine.locals), at_least=self.layout)
        if not layout.same(self.layout):
            self.seen.rekey(self.layout, layout)
            self.layout = layout
        return layout

    def lay_out(self, level: Slice, layout: KeyLayout, found) -> "Laid":
        """Each successor's key (with its position in the packed engine's order in the low
        bits where they fit), laid out block by block; the labels in packed order."""
        run, P = self.run, self.P
        clock = self.clock()
        G, L, (count, c_label, c_next, c_locals), blocks = found
        parent_keys = level.layout.rekey(level.keys, layout)
        degree = count.copy()
        for _label, _p, enabled, _found, _wide in blocks:
            degree += enabled
        row_start = np.cumsum(degree) - degree
        total = int(degree.sum())
        index_bits = max(total - 1, 1).bit_length()
        combined = layout.words == 1 and layout.bits + index_bits <= 64
        shift = np.uint64(index_bits if combined else 0)
        keys = np.empty(total, dtype=layout.dtype)
        positions = None if combined else np.empty(total, dtype=np.int64)
        labels = np.empty(total, dtype=np.uint8 if len(run.labels) < 256 else np.int32)

        def lay(start: int, block_keys: np.ndarray, position: np.ndarray) -> None:
            end = start + len(block_keys)
            if combined:  # shifted straight into place, the positions or'ed in
                np.left_shift(block_keys, shift, out=keys[start:end])
                keys[start:end] |= position.astype(np.uint64)
            else:
                positions[start:end] = position
                keys[start:end] = block_keys

        done = len(c_label)
        position = np.repeat(row_start - (np.cumsum(count) - count), count) + np.arange(done)
        block_keys, permutation = self.keyed(layout, c_next, c_locals)
        lay(0, block_keys, position)
        labels[position] = c_label if permutation is None else c_label * len(self.perms) + permutation
        before = count.copy()
        for label_id, p, enabled, found, wide in blocks:
            rows = np.flatnonzero(enabled)  # gathers by index: a block is enabled in a fraction of the rows
            position = row_start[rows] + before[rows]
            permutation = None
            if wide is not None:
                block_keys, permutation = self.keyed(layout, *wide)
            elif self.perms is None:  # only process p's locals change: flip their bits in the parent's key
                block_keys = layout.flip(parent_keys, p, L[p], found, rows)
            else:
                block_keys, permutation = self.keyed(
                    layout, G[rows], [found[rows] if q == p else L[q][rows] for q in range(P)])
            lay(done, block_keys, position)
            labels[position] = label_id if permutation is None else label_id * len(self.perms) + permutation
            before += enabled
            done += len(position)
        self.timed("gather", clock)
        return Laid(keys, positions, shift, combined, labels, degree, row_start, total, L)

    def deduplicate(self, laid: "Laid", layout: KeyLayout, find: bool = True) -> "Deduplicated":
        """Each successor key once, with its first position in the packed engine's order,
        and whether it was seen (with its id, where edges are recorded); without `find`,
        not yet looked up in the keys seen (known and known_ids None)."""
        clock = self.clock()
        step_keys = self.keys_in_order(laid.keys, laid.positions, laid.shift) if self.woken(self.step_checks) else None
        unique, first, pieces = self.first_occurrences(laid.keys, laid.positions, laid.shift, laid.combined, layout)
        clock = self.timed("sort", clock)
        known = known_ids = None
        if find:
            known, known_ids = self.seen.find(unique)
            self.timed("dedupe", clock)
        return Deduplicated(unique, first, pieces, known, known_ids, step_keys)

    def admit(self, level: Slice, offset: int, layout: KeyLayout, laid: "Laid", found: "Deduplicated"):
        """Admit the slice's new states (ids from `offset`, in order of first occurrence)
        up to where the search stops in it, check the properties on them, record the edges:
        `expand`'s answer."""
        run = self.run
        clock = self.clock()
        unique, first, pieces, known, known_ids, step_keys = found
        labels, degree, row_start, total, L = laid.labels, laid.degree, laid.row_start, laid.total, laid.L
        fresh = np.flatnonzero(~known)  # the new keys, sorted
        fresh_first = self.gathered(first, fresh)
        order = self.by_position(fresh_first, laid.total)
        new_first = self.gathered(fresh_first, order)  # in id order
        clock = self.timed("dedupe", clock)
        # each new state's parent and label
        came_from = self.came_from(level, row_start, labels, new_first)
        in_id_order = []

        def new_keys() -> np.ndarray:
            """The new keys in id order (taken once, when first asked for)."""
            if not in_id_order:
                in_id_order.append(self.gathered(unique, self.gathered(fresh, order)))
            return in_id_order[0]

        ranks = []

        def rank() -> np.ndarray:
            """Each new key's id, less `offset` (made once, when first asked for: by the
            edges or the keys seen, which threads.py may add beside)."""
            if not ranks:
                ranked = np.empty(len(fresh), dtype=np.int64)
                ranked[order] = np.arange(len(fresh))
                ranks.append(ranked)
            return ranks[0]

        # Every new key joins the keys seen before the checks (threads.py adds them beside):
        # where the search stops in this slice, it reads the keys seen no more.
        if len(fresh):
            self.seen.add_from(len(fresh), lambda: (self.gathered(unique, fresh),
                                                    state_ids(offset + rank()) if self.record_edges else None))
        # where the search stops within this level: --max-states, --stop-on-violation
        new_weights = None
        if self.perms is not None:  # each new representative stands for its orbit
            new_weights = self.orbit_sizes(layout.decode(new_keys())[1])
        admitted, counted, edges, expanded = self.cut(level, new_first, new_keys, labels,
                                                      degree, row_start, layout, total, step_keys, new_weights)
        run.expanded = level.offset + expanded
        run.transitions += counted
        admitted_weight = admitted if new_weights is None else int(new_weights[:admitted].sum())
        if new_weights is not None:  # each step counted stands for its source's orbit
            taken = np.clip(counted - row_start, 0, degree)
            run.weighted_transitions += int((self.orbit_sizes(L) * taken).sum())
        cut = counted < total or admitted < len(fresh) or (
            self.stop_on_violation and bool(run.violations)) or self.weight + admitted_weight >= self.limit
        self.weight += admitted_weight
        if self.record_edges:
            self.record(level, unique, known, known_ids, fresh, rank, offset, pieces, labels,
                        degree, row_start, total, edges, len(degree))
        piece = None
        if admitted:
            parent, via = came_from
            piece = (new_keys()[:admitted], layout, parent[:admitted], via[:admitted], admitted_weight)
        self.timed("merge", clock)
        return cut, piece

    def gathered(self, source: np.ndarray, index: np.ndarray) -> np.ndarray:
        """source[index] (threads.py gathers a large one a range per thread)."""
        return source[index]

    def edges_recorded(self) -> None:
        """Wait for the edges of the slices expanded: here, recorded at once (threads.py
        records a large slice's beside the next one's lookups)."""

    def came_from(self, level: Slice, row_start: np.ndarray, labels: np.ndarray,
                  new_first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per new state (its first position `new_first`), its parent's id and its label
        (threads.py takes them a range per thread)."""
        parent = (level.start + np.searchsorted(row_start, new_first, side="right") - 1).astype(np.int32)
        return parent, labels[new_first].astype(np.int16 if len(self.run.labels) < 2**15 else np.int32)

    def record(self, level, unique, known, known_ids, fresh, rank, offset, pieces, labels,
               degree, row_start, total, edges, n) -> None:
        """Keep this level's edges in the packed engine's order: each state's out-degree,
        then its successors' ids and labels (`rank()`: each new key's id, less `offset`)."""
        clock = self.clock()
        ids = np.empty(len(unique), dtype=np.int32 if offset + len(fresh) < 2**31 else np.int64)
        ids[known] = known_ids[known]
        ids[fresh] = offset + rank()
        targets = np.empty(total, dtype=ids.dtype)
        self.place_targets(list(pieces), ids, targets)
        rows = n
        if edges < total:
            rows = int(np.searchsorted(row_start, edges, side="left"))
        level.degree = degree[:rows].astype(np.int32)
        if edges < total and rows:
            level.degree[-1] = edges - row_start[rows - 1]
        level.targets = targets[:edges].copy() if edges < total else targets
        level.labels = labels[:edges].copy() if edges < total else labels
        self.timed("edges", clock)

    def by_position(self, positions: np.ndarray, total: int) -> np.ndarray:
        """The order that sorts `positions` (distinct, below `total`): the new keys in id order."""
        return np.argsort(positions)

    def place_targets(self, pieces: list, ids: np.ndarray, targets: np.ndarray) -> None:
        """Write each successor's id at its position in `targets`, piece by piece (see
        `first_occurrences`: the pieces cover every position once)."""
        for piece in pieces:
            place_piece(piece, ids, targets)

    def keyed(self, layout: KeyLayout, G: np.ndarray, L: list) -> tuple[np.ndarray, np.ndarray | None]:
        """The keys of states with globals `G` and per-process locals `L`; with symmetry,
        of their representatives (the locals' ids sorted, ties kept in process order),
        with the number of the permutation applied (as symmetry.edge_canonicalizer)."""
        if self.perms is None:
            return layout.encode(G, L), None
        locals_ = np.stack(L, axis=1)
        order = np.argsort(locals_, axis=1, kind="stable")
        ordered = np.take_along_axis(locals_, order, axis=1)
        code = order @ (self.P ** np.arange(self.P))
        return layout.encode(G, [ordered[:, i] for i in range(self.P)]), self.permutation_of[code]

    def orbit_sizes(self, L: list) -> np.ndarray:
        """Per representative (its locals' ids sorted), how many states its orbit holds:
        P! over the factorial of each id's multiplicity."""
        size = np.full(len(L[0]), factorial(self.P), dtype=np.int64)
        run_length = np.ones(len(L[0]), dtype=np.int64)
        for p in range(1, self.P):
            run_length = np.where(L[p] == L[p - 1], run_length + 1, 1)
            size //= run_length  # dividing by 2, 3, ... along a run divides by its factorial
        return size

    def first_occurrences(self, keys: np.ndarray, positions, shift, combined: bool, layout: KeyLayout):
        """(the distinct keys sorted, the first position of each, and with edges recorded
        the pieces that map every position to its key: [(positions in key order, where each
        run of one key starts, the index of each run's key among the distinct ones, None:
        the runs are the distinct keys in order)]). `keys` is sorted and overwritten."""
        total = len(keys)
        if layout.words > 1:
            return layout.first_occurrences(keys, positions, self.record_edges)
        if combined:  # the positions in the low bits: one sort
            unique, first, sorted_positions, starts = sorted_runs(keys, int(shift), self.record_edges)
            return unique, first, [(sorted_positions, starts, None)] if self.record_edges else None
        excess = max(layout.bits + max(total - 1, 1).bit_length() - 64, 0)  # the bits key and position overflow a word by
        if excess <= PART_BITS:
            return self.first_occurrences_in_parts(keys, positions, layout.bits, excess)
        return self.first_occurrences_by_argsort(keys, positions)

    def first_occurrences_in_parts(self, keys, positions, key_bits: int, excess: int):
        """`first_occurrences` where a key and a position need `excess` bits more than a
        word: the keys split into parts by their top `excess` bits (a radix sort), each part
        sorted with the positions in the low bits of its keys' remaining bits. The parts
        are in key order, so their distinct keys one after the other are all of them."""
        rest = key_bits - excess
        index_bits = 64 - rest
        top = (keys >> np.uint64(rest)).astype(np.uint16)
        if excess <= 2:  # a pass over the tops per part: cheaper than sorting them
            parts = [np.flatnonzero(top == number) for number in range(1 << excess)]
        else:
            order = np.argsort(top, kind="stable")  # a radix sort: the parts in order, each in position order
            bounds = np.searchsorted(top[order], np.arange((1 << excess) + 1))
            parts = [order[bounds[number]:bounds[number + 1]] for number in range(1 << excess)]
        mask = np.uint64((1 << rest) - 1)
        unique, first, pieces, count = [], [], [] if self.record_edges else None, 0
        for number, part in enumerate(parts):
            if not len(part):
                continue
            combined = (keys[part] & mask) << np.uint64(index_bits)
            combined |= positions[part].astype(np.uint64)
            part_unique, part_first, sorted_positions, starts = sorted_runs(combined, index_bits, self.record_edges)
            unique.append(part_unique | np.uint64(number << rest))
            first.append(part_first)
            if pieces is not None:
                pieces.append((sorted_positions, starts, np.arange(count, count + len(part_unique))))
            count += len(part_unique)
        if not unique:
            return keys[:0], np.zeros(0, dtype=np.int64), pieces
        return np.concatenate(unique), np.concatenate(first), pieces

    def first_occurrences_by_argsort(self, keys, positions):
        """`first_occurrences` with no room for the positions: the keys alone sorted (an
        argsort), each run's least position taken."""
        order = np.argsort(keys)
        sorted_keys, sorted_positions = keys[order], positions[order]
        starts = run_starts(sorted_keys)
        first = np.minimum.reduceat(sorted_positions, np.flatnonzero(starts)) if len(keys) else sorted_positions
        return sorted_keys[starts], first, [(sorted_positions, starts, None)] if self.record_edges else None

    # --------------------------------------------------- properties, cuts

    def cut(self, level, new_first, new_keys, labels, degree, row_start, layout, total, step_keys,
            new_weights=None):
        """Check the properties on this level's steps and new states and find where the
        packed engine's search would stop in it: (new states admitted, transitions
        counted, edges recorded, states fully expanded), recording the violations
        within those."""
        run = self.run
        counted = edges = total
        expanded = len(level)

        def parent_of(position) -> int:
            return int(np.searchsorted(row_start, position, side="right")) - 1

        def end_of(row) -> int:
            return int(row_start[row] + degree[row])

        # --max-states bounds the states admitted (with symmetry, the states their orbits hold):
        # the packed engine rejects the first new state that would pass it, or, once the
        # bound is reached exactly, stops after the state being expanded
        room = self.limit - self.weight
        reached = np.arange(1, len(new_first) + 1) if new_weights is None else np.cumsum(new_weights)
        if len(new_first) and reached[-1] > room:
            fit = int(np.searchsorted(reached, room, side="right"))  # the new states within the bound
            rejected = int(new_first[fit])
            if fit and reached[fit - 1] == room and parent_of(rejected) != parent_of(new_first[fit - 1]):
                last_parent = parent_of(new_first[fit - 1])
                counted = edges = end_of(last_parent)
                expanded = last_parent + 1
            else:
                counted, edges, expanded = rejected + 1, rejected, parent_of(rejected)
        elif len(new_first) and reached[-1] == room:  # the last one admitted reaches the bound
            last_parent = parent_of(new_first[-1])
            counted = edges = end_of(last_parent)
            expanded = last_parent + 1
        found = self.violations_in(level, new_first, new_keys, labels, row_start, layout, counted, edges,
                                   step_keys)
        if self.stop_on_violation and found:
            earliest = parent_of(min(position for position, _ in found))
            if end_of(earliest) < counted:
                counted = edges = end_of(earliest)
                expanded = earliest + 1
        offset = self.count
        for position, violation in sorted(found, key=lambda item: item[0]):
            is_step = violation.after is not None
            if violation.prop not in run.violations and position < (counted if is_step else edges):
                run.violations[violation.prop] = violation if is_step else Violation(
                    violation.prop, offset + int(np.searchsorted(new_first, position)))
        admitted = int(np.searchsorted(new_first, edges))
        return admitted, counted, edges, expanded

    def violations_in(self, level, new_first, new_keys, labels, row_start, layout, counted, edges,
                      step_keys) -> list:
        """[(position of the step, Violation)]: each woken property's first failure among
        this level's steps (a transition property) or new states (an invariant)."""
        found = []
        for name, holds in self.by_pair.items():
            if name not in self.run.violations and len(new_first):
                ok = self.pairs_hold(name, holds, new_keys(), layout)
                failing = [] if ok is None else np.flatnonzero(~ok & (new_first < edges))
                if len(failing):
                    found.append((int(new_first[failing[0]]), Violation(name, -1)))
        state_checks, step_checks = self.woken(self.state_checks), self.woken(self.step_checks)
        if not (state_checks or step_checks):
            return found
        readable = self.run.readable_state
        for name, holds in state_checks:
            for position, key in zip(new_first.tolist(), new_keys().tolist()):
                if position >= edges:
                    break
                if not holds(readable(key, layout)):
                    found.append((position, Violation(name, -1)))
                    break
        if step_checks:
            parents = np.searchsorted(row_start, np.arange(counted), side="right") - 1
        for name, holds in step_checks:
            for position in range(counted):
                parent = int(parents[position])
                before = readable(level.keys[parent], level.layout)
                after = self.reached(step_keys[position], int(labels[position]), layout)
                if not holds(before, after):
                    found.append((position, Violation(name, level.offset + parent,
                                                      self.run.labels[int(labels[position])],
                                                      self.run.packed_state(step_keys[position], layout))))
                    break
        return found

    def reached(self, key, label: int, layout: KeyLayout):
        """The state a step reached, readable, as a transition property reads it beside the
        state it left: under symmetry `key` is its representative, whose processes the
        label's permutation renamed (symmetry.step_target puts them back)."""
        packed = self.run.packed_state(key, layout)
        if self.perms is not None:
            from protocol.engine.symmetry import step_target

            packed = step_target(self.engine, self.perms)(label, packed)
        return self.engine.decode(packed)

    def pairs_hold(self, name: str, holds, keys: np.ndarray, layout: KeyLayout) -> np.ndarray | None:
        """Per state of `keys`, whether by-pair invariant `name` holds: for every process, of
        the state whose every process has that one's locals (one verdict per pair of ids);
        None where it holds for all of them."""
        engine, share = self.engine, self.pieces_share(len(keys))

        def verdict(g: int, lid: int, found=UNEVALUATED) -> int:
            return pair_verdict(engine, holds, g, lid) if found is UNEVALUATED else found

        spans = [(0, len(keys))] if share is None else share.spans(len(keys))
        pieces = [Decoded(keys[start:stop], layout) for start, stop in spans]  # each decoded by the thread it goes to
        verdicts = self.tables.lookup_columns(self.pair_tables[name], lambda: (len(engine.globals), len(engine.locals)),
                                              None, None, verdict, ("pair", name), share, pieces)
        if min(column.min(initial=1) for column in verdicts) == 1:
            return None
        ok = np.ones(len(keys), dtype=bool)
        for column in verdicts:
            ok &= column == 1
        return ok

    def pieces_share(self, size: int):
        """What shares `size` lookups among threads (threads.Share), or None: one thread's."""
        return None

    def keys_in_order(self, keys, positions, shift) -> np.ndarray:
        """The level's successor keys in the packed engine's order (taken before the sort
        reorders `keys`)."""
        in_order = np.empty(len(keys), dtype=keys.dtype)
        if positions is None:  # the positions are in the low bits
            in_order[(keys & np.uint64((1 << int(shift)) - 1)).astype(np.int64)] = keys >> shift
        else:
            in_order[positions] = keys
        return in_order
