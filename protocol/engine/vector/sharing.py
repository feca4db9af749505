"""Threads sharing the vector engine's work, and the CPU seconds they spend beside one another.
Knows nothing of the protocol, nor of the search: `search.py` (liveness decided by threads) and
`threads.py` (the threaded search) both use it."""

from __future__ import annotations

import itertools
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable


class Share:
    """N threads sharing work: the calling one and a pool of N - 1. It counts the CPU
    seconds its jobs spent beside the longest of each sharing (`overlapped`): the run's
    CPU seconds less these are its critical path, about the wall seconds it would take
    on N idle cores (a little less: a thread waiting for the interpreter's lock spends
    wall seconds, not CPU ones). `bench --workers` prints both, since a shared
    machine's wall seconds say more about the other runs than about this one."""

    def __init__(self, workers: int):
        self.workers = workers
        self.pool = ThreadPoolExecutor(max_workers=workers - 1, thread_name_prefix="vector")
        self.overlapped = 0.0

    def map(self, job: Callable, items: list) -> list:
        """[job(item) for item in items], shared by the calling thread and the pool: each
        takes the next item not taken until none is left, so a thread busy elsewhere (a
        `later` job) or an item dearer than the others does not hold the rest back.
        Every job has finished when this returns or raises (no thread is left writing
        into arrays the caller goes on to use). A pool thread that does not start before
        the items are all taken is not waited for: so a job of the pool may share work
        too (its own thread takes every item the others do not)."""
        if len(items) < 2:
            return [job(item) for item in items]
        answers, taken, failed = [None] * len(items), itertools.count(), []

        def drain() -> float:
            """Take items until none is left (or one failed): the CPU seconds spent."""
            started = time.thread_time()
            try:
                while not failed:
                    k = next(taken)
                    if k >= len(items):
                        break
                    answers[k] = job(items[k])
            except BaseException:
                failed.append(True)
                raise
            return time.thread_time() - started

        helpers = [self.pool.submit(drain) for _ in range(min(self.workers - 1, len(items) - 1))]
        mine = 0.0
        try:
            mine = drain()
        finally:  # a helper not started yet has nothing left to take: it is not waited for
            theirs = [helper.result() for helper in helpers if not helper.cancel()]
        spent = [mine, *theirs]
        self.overlapped += sum(spent) - max(spent)
        return answers

    def later(self, job: Callable[[], object]) -> Callable[[], object]:
        """What answers `job()` when called (and raises what it raised), `job` run by the pool
        meanwhile; its CPU seconds, up to the calling thread's in between, counted as spent
        beside it."""
        started, spent = time.thread_time(), []

        def timed():
            begun = time.thread_time()
            try:
                return job()
            finally:
                spent.append(time.thread_time() - begun)

        future = self.pool.submit(timed)
        uncounted = [True]  # threads may ask at once: the one that pops it counts (a pop is atomic)

        def answer():
            try:
                return future.result()
            finally:
                try:
                    uncounted.pop()
                except IndexError:
                    pass
                else:
                    self.overlapped += min(sum(spent), max(time.thread_time() - started, 0.0))

        return answer

    def spans(self, size: int) -> list[tuple[int, int]]:
        """`size` items cut in one consecutive range per thread."""
        return bounds(size, self.workers)

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def side_by_side(jobs: list[Callable]) -> tuple[list, list[float]]:
    """[job() for job in jobs], the first in the calling thread, each other in a daemon
    thread of its own (a Ctrl-C here does not wait for them), and the CPU seconds each spent."""
    answers, spent = [None] * len(jobs), [0.0] * len(jobs)

    def run(k: int) -> None:
        started = time.thread_time()
        try:
            answers[k] = (True, jobs[k]())
        except BaseException as error:  # raised in the calling thread
            answers[k] = (False, error)
        finally:
            spent[k] = time.thread_time() - started

    others = [threading.Thread(target=run, args=(k,), name="vector-liveness", daemon=True)
              for k in range(1, len(jobs))]
    for thread in others:
        thread.start()
    run(0)
    for thread in others:
        thread.join()
    for ok, answer in answers:
        if not ok:
            raise answer
    return [answer for _, answer in answers], spent


def beside_one_another(spent: list[float], workers: int) -> float:
    """Of threads that ran at once and spent `spent` CPU seconds, the seconds spent beside
    one another on `workers` cores: all but the longest, or but an even share of `workers`."""
    total = sum(spent)
    return total - max(max(spent), total / workers)


def bounds(size: int, parts: int) -> list[tuple[int, int]]:
    """`parts` consecutive ranges covering 0..size, as even as can be."""
    cuts = [size * k // parts for k in range(parts + 1)]
    return list(zip(cuts, cuts[1:]))
