"""The vector engine's search on several cores of one machine, by threads. Knows nothing of the protocol.

numpy lets go of the interpreter's lock in its sorts, gathers, searches and
element-wise loops on large arrays, which is where the vector engine spends
most of a large level. So `--workers N` on one machine runs `Search` with N
threads sharing each slice of a level:

- the slice is cut into 4N consecutive parts (parents in order); the calling
  thread looks up one part's successors in the tables after another (filling
  a table runs the readable actions, which hold the lock anyway, and interns
  components into the one packed engine), while the pool lays out, sorts and
  deduplicates the parts already looked up, and looks them up in the keys
  seen (`Search.lay_out`, `deduplicate`; `Pipeline`);
- the parts' distinct keys are merged into the slice's: a key's first
  position is its first part's (the parts are in order), so the merge gives
  what one sort of the whole slice gives, and the rest of the slice (the cut,
  the properties, the edges, the new states' ids) is `Search.admit`'s, with
  its sort of the new keys into id order done by slots, and the edges'
  targets placed, a share per thread;
- adding the new keys to the keys seen merges sorted runs in N pieces cut at
  the same keys in both (`ThreadedSortedKeys`); for a large slice the pool does
  it, and records the slice's edges, while the calling thread goes on to the
  next slice's lookups (nothing reads either before the next slice's keys are
  looked up in the keys seen, or the search ends).

Work shared at once (`Share.map`) is taken item by item by whichever thread is
free, so a thread busy with such a job, or a dearer piece, holds nothing back;
the slice's keys are cut into pieces at quantiles of a sample of every part's.

The readable actions and checks that fill the tables run in Python, which
threads cannot share: N - 1 forked helper processes evaluate a share of each
large batch of them (helpers.py), and the pairs' verdicts are looked up a
piece per thread.

So the ids, parents, edges, counts, depth, violations, traces and lassos
are those of one thread, whatever N (tests/test_threads.py): the threads
only share the work of each step. The partitioned search (partition.py)
stays for a cluster of machines (`--cluster`).
"""

from __future__ import annotations

import threading
import time
from typing import Callable

import numpy as np

from protocol.engine.vector.helpers import Helpers
from protocol.engine.vector.sharing import Share, bounds
from protocol.engine.vector.search import (
    Deduplicated, KeyLayout, Laid, Search, Slice, SortedKeys, merge_into, place_piece, run_starts,
)

# A slice (or a merge of keys seen) smaller than this is done by one thread: the
# threads' hand-over costs more than they save on small arrays.
THREADED_AT_LEAST = 1 << 14
# A slice is cut into this many parts per thread: while the calling thread looks up a
# part, the pool sorts those before it, and the last parts balance the threads' work.
PARTS = 4
# The last part of a slice, against each of the others: the calling thread lays it out and
# sorts it itself once it has looked it up, and where the pool has caught up by then (the
# lookups run the readable actions, the dearer part of a level where many components are
# new), the pool waits for it; a small last part keeps that wait short.
LAST_PART = 0.25
# The keys that cut a slice's parts into pieces are quantiles of a sample of this many keys per piece.
SAMPLES_PER_PIECE = 64


def tapered(size: int, parts: int) -> list[tuple[int, int]]:
    """`parts` consecutive ranges covering 0..size, the last LAST_PART of each of the others
    (one part is the whole slice)."""
    whole = (parts - 1) + LAST_PART
    cuts = [int(size * k / whole) for k in range(parts)] + [size]
    return list(zip(cuts, cuts[1:]))


class ThreadedSortedKeys(SortedKeys):
    """`SortedKeys` whose merges of two runs are cut in pieces, merged one per thread; a
    large slice's keys are added by the pool while the calling thread goes on (to the
    next slice's lookups, which hold the interpreter's lock). Adds run one after another,
    each once the one before has ended; finding keys waits only until the keys added so
    far are runs of their own (`listed`), not for the merges that follow (`compact`);
    every other use of the keys waits for all of it."""

    def __init__(self, keys: np.ndarray, ids: np.ndarray | None, share: Share):
        super().__init__(keys, ids)
        self.share = share
        self.adding: list[Callable[[], object]] = []  # the adds not waited for, each one's answer
        self.listed: threading.Event | None = None  # set once the last add's keys are among the runs
        self.ended: threading.Event | None = None  # set once the last add has ended (merged, or failed)
        self.unlisted: list = []  # not empty once an add's keys could not be made (its answer raises why)

    def settle(self) -> None:
        """Wait for the keys being added (raising what adding them raised). Threads
        finding keys at once may each wait: an add is forgotten once done."""
        pending = list(self.adding)
        for answer in pending:
            answer()
        self.adding = [answer for answer in self.adding if answer not in pending]

    def __len__(self) -> int:
        self.settle()
        return super().__len__()

    def find(self, unique: np.ndarray):
        listed = self.listed
        if listed is not None:
            listed.wait()
        if self.unlisted:
            self.settle()  # raises what making them raised: never an answer without them
        return super().find(unique)

    def add_from(self, size: int, make: Callable[[], tuple]) -> None:
        if size < THREADED_AT_LEAST:
            self.settle()
            return super().add(*make())
        before, listed, ended = self.ended, threading.Event(), threading.Event()

        def add() -> None:
            try:
                if before is not None:
                    before.wait()  # the runs are the last add's to change: one list at a time
                run = make()
            except BaseException:
                self.unlisted.append(True)
                listed.set()
                ended.set()
                raise
            self.runs = [*self.runs, run]
            listed.set()
            try:
                self.compact()
            finally:
                ended.set()

        self.listed, self.ended = listed, ended
        self.adding.append(self.share.later(add))

    def add(self, keys: np.ndarray, ids: np.ndarray | None) -> None:
        self.add_from(len(keys), lambda: (keys, ids))

    def rekey(self, old, new) -> None:
        self.settle()
        super().rekey(old, new)

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
        self.tables.clock = self.clock  # the pool's jobs run while this thread fills the tables
        self.helpers = self.tables.helpers = Helpers(self.engine, workers - 1)  # forked when first needed
        self.run.helper_peak_bytes = self.helpers.peak_bytes  # filled as they end
        self.share = Share(workers)
        self.parts_lock = threading.Lock()
        self.recording: list[Callable[[], object]] = []  # the slices' edges the pool is recording
        self.run.workers = workers

    def timed(self, part: str, since: float) -> float:
        with self.parts_lock:
            return super().timed(part, since)

    def new_seen(self, keys: np.ndarray, ids: np.ndarray | None) -> SortedKeys:
        return ThreadedSortedKeys(keys, ids, self.share)

    def needed_layout(self) -> KeyLayout:
        """The layout the components interned so far need (`widened_layout` without the re-keying)."""
        engine = self.engine
        return KeyLayout.fitting(self.P, len(engine.globals), len(engine.locals), at_least=self.layout)

    def by_position(self, positions: np.ndarray, total: int) -> np.ndarray:
        """As one thread's, without a sort: a range of positions per thread, each of its
        positions' indices put in a slot per position (they are distinct), then its slots
        read in order."""
        if len(positions) < THREADED_AT_LEAST:
            return super().by_position(positions, total)

        def in_order(span: tuple[int, int]) -> np.ndarray:
            start, stop = span
            inside = np.flatnonzero((positions >= start) & (positions < stop))
            slot = np.full(stop - start, -1, dtype=np.int64)
            slot[positions[inside] - start] = inside
            return slot[slot >= 0]

        return np.concatenate(self.share.map(in_order, bounds(total, self.share.workers)))

    def gathered(self, source: np.ndarray, index: np.ndarray) -> np.ndarray:
        if len(index) < THREADED_AT_LEAST:
            return source[index]
        out = np.empty(len(index), dtype=source.dtype)

        def piece(span: tuple[int, int]) -> None:
            out[span[0]:span[1]] = source[index[span[0]:span[1]]]

        self.share.map(piece, self.share.spans(len(index)))
        return out

    def pieces_share(self, size: int):
        return self.share if size >= THREADED_AT_LEAST else None

    def came_from(self, level, row_start, labels, new_first):
        if len(new_first) < THREADED_AT_LEAST:
            return super().came_from(level, row_start, labels, new_first)
        spans = self.share.spans(len(new_first))
        found = self.share.map(lambda span: Search.came_from(self, level, row_start, labels,
                                                             new_first[span[0]:span[1]]), spans)
        return np.concatenate([parent for parent, _ in found]), np.concatenate([via for _, via in found])

    def record(self, level, unique, known, known_ids, fresh, rank, offset, pieces, labels,
               degree, row_start, total, edges, n) -> None:
        """A large slice's edges recorded by the pool, beside the next slice's lookups
        (`edges_recorded` waits for them): nothing reads them before the search ends."""
        if total < THREADED_AT_LEAST:
            return super().record(level, unique, known, known_ids, fresh, rank, offset, pieces, labels,
                                  degree, row_start, total, edges, n)
        self.recording.append(self.share.later(lambda: Search.record(
            self, level, unique, known, known_ids, fresh, rank, offset, pieces, labels,
            degree, row_start, total, edges, n)))

    def edges_recorded(self) -> None:
        recording, self.recording = self.recording, []
        for answer in recording:
            answer()

    def place_targets(self, pieces: list, ids: np.ndarray, targets: np.ndarray) -> None:
        if len(targets) < THREADED_AT_LEAST or len(pieces) < 2:
            return super().place_targets(pieces, ids, targets)
        self.share.map(lambda piece: place_piece(piece, ids, targets), pieces)  # disjoint positions each

    def levels(self) -> None:
        kept = False
        try:
            super().levels()
            # with the edges kept, deciding liveness evaluates the leads-to sides in the helpers
            kept = self.run.edges_recorded and bool(self.helpers.children)
        finally:
            self.share.close()
            if kept:
                self.run.keep_helpers(self.helpers)
            else:
                self.helpers.close()
            self.run.overlapped = self.share.overlapped + self.helpers.beside

    def expand(self, level: Slice, offset: int) -> tuple[bool, tuple | None]:
        if len(level) < THREADED_AT_LEAST:
            return super().expand(level, offset)
        parts = [Slice(level, start, stop) for start, stop in tapered(len(level), PARTS * self.share.workers)]
        done = Pipeline(self, parts).sorted_parts()
        clock = self.clock()
        laid, deduplicated = joined_parts([laid for laid, _ in done], [found for _, found in done], self.share,
                                          self.seen)
        self.timed("dedupe", clock)
        return self.admit(level, offset, self.layout, laid, deduplicated)


class Pipeline:
    """A slice's parts through `ThreadedSearch.expand`: the calling thread looks up one part
    after another (the readable actions hold the interpreter's lock anyway) while the
    pool lays out, sorts and deduplicates the parts already looked up; then the calling
    thread takes the parts the pool has not started. A part is sorted under the layout
    of the moment; where a later part's components widen it, the running parts are
    waited for, the keys seen re-keyed, and the parts done re-keyed with them."""

    def __init__(self, search: ThreadedSearch, parts: list[Slice]):
        self.search, self.parts = search, parts
        # per part: (Laid, Deduplicated, the layout of its distinct keys, the layout it was laid out under)
        self.results: list = [None] * len(parts)
        self.queued: dict = {}  # part -> (its job in the pool, its lookups, its layout)
        self.pool_seconds: list[float] = []  # the CPU seconds of each of the pool's jobs

    def sorted_parts(self) -> list[tuple[Laid, Deduplicated]]:
        """Each part's (Laid, Deduplicated), in order, under the search's layout."""
        search = self.search
        helpers = search.helpers
        started, helped = time.thread_time(), (helpers.cpu, helpers.beside, helpers.waited)
        try:
            for k, part in enumerate(self.parts):
                found = search.lookups(part)
                if not search.layout.same(search.needed_layout()):
                    self.settle()  # nothing may read the keys seen while they are re-keyed
                    search.widened_layout()
                    self.rekey_done()
                if k + 1 < len(self.parts):
                    job = search.share.pool.submit(self.timed_job, k, found, search.layout)
                    self.queued[k] = (job, found, search.layout)
                else:
                    self.job(k, found, search.layout)
            for k in sorted(self.queued):  # the parts the pool has not started: this thread's
                job, found, layout = self.queued[k]
                if job.cancel():
                    del self.queued[k]
                    self.job(k, found, layout)
            self.settle()
        finally:
            self.settle(cancel=True)  # Ctrl-C: the parts not started are not started
        # The calling thread's path: its CPU seconds and those it waited for the helpers past
        # its own share; beside it, the pool's and the helpers' (counted here, not as `beside`).
        mine, pools = time.thread_time() - started, sum(self.pool_seconds)
        helpers_cpu, waited = helpers.cpu - helped[0], helpers.waited - helped[2]
        helpers.beside = helped[1]
        total = mine + pools + helpers_cpu
        # as if they ran side by side throughout, on as many cores as workers
        search.share.overlapped += total - max(mine + waited, pools, total / search.share.workers)
        self.rekey_done()
        self.step_keys_where_woken()
        return [(laid, found) for laid, found, _layout, _laid_layout in self.results]

    def timed_job(self, k: int, found, layout) -> None:
        started = time.thread_time()
        try:
            self.job(k, found, layout)
        finally:
            self.pool_seconds.append(time.thread_time() - started)

    def job(self, k: int, found, layout) -> None:
        laid = self.search.lay_out(self.parts[k], layout, found)  # looked up in the keys seen once joined
        self.results[k] = (laid, self.search.deduplicate(laid, layout, find=False), layout, layout)

    def settle(self, cancel: bool = False) -> None:
        """Wait for every part in the pool (its exception, if any, raised here); with
        `cancel`, for those it has started only."""
        queued, self.queued = self.queued, {}
        for job, _found, _layout in queued.values():
            if not (cancel and job.cancel()):
                job.result()

    def rekey_done(self) -> None:
        """The parts sorted under a narrower layout than the search's now, re-keyed to it
        (re-keying keeps sorted keys sorted)."""
        now = self.search.layout
        for k, result in enumerate(self.results):
            if result is not None and not result[2].same(now):
                laid, found, layout, laid_layout = result
                step_keys = None if found.step_keys is None else layout.rekey(found.step_keys, now)
                self.results[k] = (laid, found._replace(unique=layout.rekey(found.unique, now), step_keys=step_keys),
                                   now, laid_layout)

    def step_keys_where_woken(self) -> None:
        """A transition property woken by a later part's components (a component that
        failed it) is checked on every step of the slice, as one thread checks it: the
        parts sorted before it woke get their steps' keys too."""
        search = self.search
        if all(result[1].step_keys is not None for result in self.results) or not search.woken(search.step_checks):
            return
        for k, (laid, found, layout, laid_layout) in enumerate(self.results):
            if found.step_keys is None:
                self.results[k] = (laid, found._replace(step_keys=steps_keys(search, laid, found, layout, laid_layout)),
                                   layout, laid_layout)


def steps_keys(search, laid: Laid, found: Deduplicated, layout, laid_layout) -> np.ndarray:
    """A sorted part's successor keys in the packed engine's order. With edges recorded
    the sort has overwritten the laid keys with their positions (`sorted_runs`), so they
    are read back from the pieces that map each position to its distinct key."""
    if found.pieces is None:  # the sort kept each key whole, with its position
        return laid_layout.rekey(search.keys_in_order(laid.keys, laid.positions, laid.shift), search.layout)
    in_order = np.empty(laid.total, dtype=found.unique.dtype)
    for piece in found.pieces:
        place_piece(piece, found.unique, in_order)
    return layout.rekey(in_order, search.layout)


class JoinedPieces:
    """The slice's pieces that map each position to its key (`first_occurrences`), made
    from its parts' when iterated: only the edges read them, which the pool records."""

    def __init__(self, found: list[Deduplicated], starts: np.ndarray, base: np.ndarray, where: list):
        self.found, self.starts, self.base, self.where = found, starts, base, where

    def __iter__(self):
        """Each part's runs of positions (placed past the parts before), pointed at the slice's keys."""
        for p, (part, start) in enumerate(zip(self.found, self.starts)):
            mine = np.concatenate([where[p] + self.base[k] for k, where in enumerate(self.where)])
            for positions, runs, which in part.pieces:
                yield positions, runs, mine if which is None else mine[which], int(start)


def cut_keys(runs: list[np.ndarray], pieces: int) -> np.ndarray:
    """Keys that cut the sorted `runs` together into about `pieces` pieces of alike
    size: quantiles of a sample of every run (one run's alone cut the others unevenly,
    where their keys lie elsewhere)."""
    total = sum(len(run) for run in runs)
    if not total:
        return np.zeros(0, dtype=runs[0].dtype)
    stride = max(total // (pieces * SAMPLES_PER_PIECE), 1)
    sample = np.sort(np.concatenate([run[::stride] for run in runs]))
    return sample[[start for start, _ in bounds(len(sample), pieces)][1:]]


def joined_parts(laid: list[Laid], found: list[Deduplicated], share: Share,
                 seen: SortedKeys) -> tuple[Laid, Deduplicated]:
    """The slice's `Laid` (what `admit` reads of it) and `Deduplicated` from its parts':
    positions moved past the parts before, each distinct key once, with the first
    position of its first part (the parts are in order), looked up in the keys `seen`.
    The parts' sorted keys are cut at the same keys into pieces, merged and looked up
    one per thread (a piece's keys are a range of the keys seen: once each, nearby)."""
    starts = np.cumsum([0] + [part.total for part in laid])
    row_start = np.concatenate([part.row_start + start for part, start in zip(laid, starts)])
    whole = Laid(None, None, None, None, np.concatenate([part.labels for part in laid]),
                 np.concatenate([part.degree for part in laid]), row_start, int(starts[-1]), None)
    at_keys = cut_keys([part.unique for part in found], PARTS * share.workers)
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
        bounds_ = np.cumsum([0] + [b - a for _, a, b in spans])
        unique = in_order[first_of_run]
        return (unique, np.concatenate([f[a:b] for f, (_, a, b) in zip(first, spans)])[taken],
                *seen.find(unique), [where[bounds_[p]:bounds_[p + 1]] for p in range(len(found))])

    pieces_ = share.map(piece, list(range(len(at_keys) + 1)))
    base = np.cumsum([0] + [len(unique) for unique, *_ in pieces_])
    unique = np.concatenate([unique for unique, *_ in pieces_])
    merged_first = np.concatenate([piece_first for _, piece_first, *_ in pieces_])
    known = np.concatenate([piece_known for _, _, piece_known, *_ in pieces_])
    known_ids = None
    if pieces_[0][3] is not None:
        known_ids = np.concatenate([ids for _, _, _, ids, _ in pieces_])
    pieces = None
    if found[0].pieces is not None:
        pieces = JoinedPieces(found, starts, base, [where for *_, where in pieces_])
    step_keys = None
    if found[0].step_keys is not None:
        step_keys = np.concatenate([part.step_keys for part in found])
    return whole, Deduplicated(unique, merged_first, pieces, known, known_ids, step_keys)
