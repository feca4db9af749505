"""The run's worker pools stop at once on an interrupt, wherever it is raised in the
block, and leave nothing for concurrent.futures' exit hook to race (issue 24's
flaky Ctrl-C of matrix --jobs 2). In-process, with forked workers."""

from __future__ import annotations

import multiprocessing
import signal
import time

import pytest

from protocol.lifecycle import forkserver_context, process_pool


def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_an_interrupt_as_the_work_is_handed_out_stops_the_pool_at_once():
    """The interrupt came at the end of the block handing out the checks (lifecycle.deferred),
    outside the `try` that stopped the pool: the pool's exit then waited for every check."""
    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        with process_pool(1, multiprocessing.get_context("fork")) as pool:
            pool.submit(nap, 30)
            manager = pool._executor_manager_thread
            raise KeyboardInterrupt
    assert time.perf_counter() - started < 5
    assert not manager.is_alive()  # closed: concurrent.futures' exit hook has nothing left to wake


def test_a_normal_exit_waits_for_the_work():
    with process_pool(1, multiprocessing.get_context("fork")) as pool:
        future = pool.submit(nap, 0.01)
    assert future.result() == 0.01


@pytest.mark.slow  # starts a forkserver (a fresh interpreter)
def test_the_forkserver_and_its_workers_leave_ctrl_c_to_the_parent():
    context = forkserver_context()
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())  # the parent's mask is as it was
    with process_pool(1, context) as pool:
        blocked = pool.submit(signal.pthread_sigmask, signal.SIG_BLOCK, set()).result()
    assert signal.SIGINT in blocked
