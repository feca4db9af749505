"""The vector engine's search on several cores of one machine, by threads. Knows nothing of the protocol.

numpy lets go of the interpreter's lock in its sorts, gathers, searches and
element-wise loops on large arrays, which is where the vector engine spends
most of a large level. So `--workers N` on one machine runs `Search` with N
threads sharing each slice of a level:

- the slice is cut into N consecutive parts (parents in order), and each
  part's successors are looked up in the tables one part after another, by
  the calling thread: filling a table runs the readable actions, which hold
  the lock anyway, and interns components into the one packed engine;
- each part's keys are laid out, sorted and deduplicated, and looked up in
  the keys seen, each in its own thread (`Search.lay_out`, `deduplicate`);
- the parts' distinct keys are merged into the slice's: a key's first
  position is its first part's (the parts are in order), so the merge gives
  what one sort of the whole slice gives, and the rest of the slice (the cut,
  the properties, the edges, the new states' ids) is `Search.admit`'s;
- adding the new keys to the keys seen merges sorted runs in N pieces cut at
  the same keys in both (`ThreadedSortedKeys`).

So the ids, parents, edges, counts, depth, violations, traces and lassos
are those of one thread, whatever N (tests/test_threads.py): the threads
only share the work of each step. The partitioned search (partition.py)
stays for a cluster of machines (`--cluster`).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

from protocol.engine.vector.search import (
    Deduplicated, Laid, Search, Slice, SortedKeys, merge_into, place_piece, run_starts,
)

# A slice (or a merge of keys seen) smaller than this is done by one thread: the
# threads' hand-over costs more than they save on small arrays.
THREADED_AT_LEAST = 1 << 14


class Share:
    """N threads sharing work: the calling one and a pool of N - 1. It counts the CPU
    seconds its jobs spent beside the longest of each sharing (`overlapped`): the run's
    CPU seconds less these are its critical path, the wall seconds it would take on N
    idle cores (`bench --workers` prints both, since a shared machine's wall seconds
    say more about the other runs than about this one)."""

    def __init__(self, workers: int):
        self.workers = workers
        self.pool = ThreadPoolExecutor(max_workers=workers - 1, thread_name_prefix="vector")
        self.overlapped = 0.0

    def map(self, job: Callable, items: list) -> list:
        """[job(item) for item in items], the first in the calling thread, the others in the
        pool; every job has finished when this returns or raises (no thread is left
        writing into arrays the caller goes on to use)."""
        spent = [0.0] * len(items)

        def timed(k: int):
            started = time.thread_time()
            try:
                return job(items[k])
            finally:
                spent[k] = time.thread_time() - started

        futures = [self.pool.submit(timed, k) for k in range(1, len(items))]
        try:
            first = timed(0)
        finally:
            rest = [future.result() for future in futures]
        self.overlapped += sum(spent) - max(spent)
        return [first, *rest]

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def bounds(size: int, parts: int) -> list[tuple[int, int]]:
    """`parts` consecutive ranges covering 0..size, as even as can be."""
    cuts = [size * k // parts for k in range(parts + 1)]
    return list(zip(cuts, cuts[1:]))


class ThreadedSortedKeys(SortedKeys):
    """`SortedKeys` whose merges of two runs are cut in pieces, merged one per thread."""

    def __init__(self, keys: np.ndarray, ids: np.ndarray | None, share: Share):
        super().__init__(keys, ids)
        self.share = share

    def merged(self, a, a_ids, b, b_ids):
        if len(a) + len(b) < THREADED_AT_LEAST or not len(a):
            return super().merged(a, a_ids, b, b_ids)
        keys = np.empty(len(a) + len(b), dtype=a.dtype)
        ids = None if a_ids is None else np.empty(len(keys), dtype=np.result_type(a_ids, b_ids))
        # cut a evenly, and b where a's cuts fall in it: the pieces merge independently
        cuts_a = [start for start, _ in bounds(len(a), self.share.workers)] + [len(a)]
        cuts_b = [0, *np.searchsorted(b, a[cuts_a[1:-1]]).tolist(), len(b)]

        def piece(k: int) -> None:
            a0, a1, b0, b1 = cuts_a[k], cuts_a[k + 1], cuts_b[k], cuts_b[k + 1]
            out = slice(a0 + b0, a1 + b1)
            merge_into(a[a0:a1], None if a_ids is None else a_ids[a0:a1], b[b0:b1],
                       None if b_ids is None else b_ids[b0:b1], keys[out], None if ids is None else ids[out])

        self.share.map(piece, list(range(self.share.workers)))
        return keys, ids


class ThreadedSearch(Search):
    """`Search` with each slice's sorts and searches shared by `workers` threads."""

    clock = staticmethod(time.thread_time)  # each thread's own CPU seconds, added into the parts

    def __init__(self, workers: int, *arguments):
        super().__init__(*arguments)
        self.share = Share(workers)
        self.parts_lock = threading.Lock()
        self.run.workers = workers

    def timed(self, part: str, since: float) -> float:
        with self.parts_lock:
            return super().timed(part, since)

    def new_seen(self, keys: np.ndarray, ids: np.ndarray | None) -> SortedKeys:
        return ThreadedSortedKeys(keys, ids, self.share)

    def place_targets(self, pieces: list, ids: np.ndarray, targets: np.ndarray) -> None:
        if len(targets) < THREADED_AT_LEAST or len(pieces) < 2:
            return super().place_targets(pieces, ids, targets)
        self.share.map(lambda piece: place_piece(piece, ids, targets), pieces)  # disjoint positions each

    def levels(self) -> None:
        try:
            super().levels()
        finally:
            self.share.close()
            self.run.overlapped = self.share.overlapped

    def expand(self, level: Slice, offset: int) -> tuple[bool, tuple | None]:
        if len(level) < THREADED_AT_LEAST:
            return super().expand(level, offset)
        parts = [Slice(level, start, stop) for start, stop in bounds(len(level), self.share.workers)]
        found = [self.lookups(part) for part in parts]  # the readable actions: one thread at a time
        layout = self.widened_layout()

        def sorted_part(k: int) -> tuple[Laid, Deduplicated]:
            laid = self.lay_out(parts[k], layout, found[k])
            found[k] = None  # its lookups are laid out: let them go
            return laid, self.deduplicate(laid, layout)

        done = self.share.map(sorted_part, list(range(len(parts))))
        clock = self.clock()
        laid, deduplicated = joined_parts([laid for laid, _ in done], [found for _, found in done], self.share)
        self.timed("dedupe", clock)
        return self.admit(level, offset, layout, laid, deduplicated)


def joined_parts(laid: list[Laid], found: list[Deduplicated], share: Share) -> tuple[Laid, Deduplicated]:
    """The slice's `Laid` (what `admit` reads of it) and `Deduplicated` from its parts':
    positions moved past the parts before, each distinct key once, with the first
    position and the seen id of its first part (the parts are in order). The parts'
    sorted keys are cut at the same keys into pieces, merged one per thread."""
    starts = np.cumsum([0] + [part.total for part in laid])
    row_start = np.concatenate([part.row_start + start for part, start in zip(laid, starts)])
    whole = Laid(None, None, None, None, np.concatenate([part.labels for part in laid]),
                 np.concatenate([part.degree for part in laid]), row_start, int(starts[-1]), None)
    longest = max(found, key=lambda part: len(part.unique)).unique
    at_keys = longest[[start for start, _ in bounds(len(longest), share.workers)][1:] if len(longest) else []]
    cuts = [[0, *np.searchsorted(part.unique, at_keys).tolist(), len(part.unique)] for part in found]
    first = [part.first + start for part, start in zip(found, starts)]

    def piece(k: int):
        """Piece k of every part merged: (its distinct keys, per key its first part's position,
        seen and id, and per part the index of each of its keys among the piece's)."""
        spans = [(part, cut[k], cut[k + 1]) for part, cut in zip(found, cuts)]
        every = np.concatenate([part.unique[a:b] for part, a, b in spans])
        order = np.argsort(every, kind="stable")  # the parts' runs merged; a key's first part first
        in_order = every[order]
        first_of_run = run_starts(in_order)
        where = np.empty(len(every), dtype=np.int64)
        where[order] = np.cumsum(first_of_run) - 1
        taken = order[first_of_run]  # per distinct key, where its first part has it in `every`
        known_ids = None
        if found[0].known_ids is not None:
            known_ids = np.concatenate([part.known_ids[a:b] for part, a, b in spans])[taken]
        bounds_ = np.cumsum([0] + [b - a for _, a, b in spans])
        return (in_order[first_of_run], np.concatenate([f[a:b] for f, (_, a, b) in zip(first, spans)])[taken],
                np.concatenate([part.known[a:b] for part, a, b in spans])[taken], known_ids,
                [where[bounds_[p]:bounds_[p + 1]] for p in range(len(found))])

    pieces_ = share.map(piece, list(range(len(at_keys) + 1)))
    base = np.cumsum([0] + [len(unique) for unique, *_ in pieces_])
    unique = np.concatenate([unique for unique, *_ in pieces_])
    merged_first = np.concatenate([piece_first for _, piece_first, *_ in pieces_])
    known = np.concatenate([piece_known for _, _, piece_known, *_ in pieces_])
    known_ids = None
    if found[0].known_ids is not None:
        known_ids = np.concatenate([ids for _, _, _, ids, _ in pieces_])
    pieces = None
    if found[0].pieces is not None:  # each part's runs of positions, pointed at the slice's keys
        pieces = []
        for p, (part, start) in enumerate(zip(found, starts)):
            mine = np.concatenate([where[p] + base[k] for k, (*_, where) in enumerate(pieces_)])
            pieces += [(positions + start, runs, mine if which is None else mine[which])
                       for positions, runs, which in part.pieces]
    step_keys = None
    if found[0].step_keys is not None:
        step_keys = np.concatenate([part.step_keys for part in found])
    return whole, Deduplicated(unique, merged_first, pieces, known, known_ids, step_keys)
