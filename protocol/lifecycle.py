"""The life of a run, the same for every subcommand and every worker.

- Signals: SIGINT (Ctrl-C), SIGTERM and SIGHUP all raise KeyboardInterrupt in
  the main thread, so the one path every search already has for Ctrl-C (keep
  the counts explored, say the run is incomplete, derive no verdict) serves
  all three. `how()` names the signal for the one line on stderr.
- Loops over configurations stop at the first interrupt: a search that caught
  the KeyboardInterrupt returns an interrupted result, and `stop_if_interrupted`
  raises it again between items.
- Workers: every process forked while a run is on resets SIGTERM and SIGHUP
  to their default (it dies), ignores SIGINT (the parent decides) and asks the
  kernel to send it SIGTERM when its parent dies, however the parent dies
  (even SIGKILL). `end_children` ends the workers still alive when the run
  ends, on every exit path.

Exit code of an interrupted run: 128 + the signal (130 Ctrl-C, 143 SIGTERM,
129 SIGHUP), as a shell reports it (protocol/exits.py).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager

# The signals that end a run, and how the one line on stderr names them.
NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}

_received: list[int] = []  # the signals received during this run, in order
_active = False  # a run is on in this process: its forked children become workers
_hooked = False  # the fork hook is registered (once per process: it cannot be removed)


def how() -> str:
    """The interrupt that ended the run, as the stderr line names it (Ctrl-C when none was recorded)."""
    return NAMES.get(_received[0], "Ctrl-C") if _received else "Ctrl-C"


def interrupted() -> bool:
    return bool(_received)


def signal_received() -> int | None:
    """The first signal that interrupted this run, None when none did (a plain KeyboardInterrupt
    counts as Ctrl-C where the exit code is decided)."""
    return _received[0] if _received else None


def stop_if_interrupted() -> None:
    """Raise KeyboardInterrupt again if a signal arrived: between the items of a loop
    whose search caught the first one and returned an incomplete result."""
    if _received:
        raise KeyboardInterrupt


_deferring = 0  # inside `deferred()`: a signal is noted, and raised when the block ends


def _on_signal(signum, frame) -> None:
    _received.append(signum)
    if not _deferring:
        raise KeyboardInterrupt


@contextmanager
def deferred():
    """A block no signal cuts in the middle (starting worker processes: a worker half
    started when its parent tears down its queues fails noisily); a signal that arrived
    meanwhile is raised when it ends."""
    global _deferring
    noted = len(_received)
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
    if not _deferring and len(_received) > noted:
        raise KeyboardInterrupt


def catch_signals() -> None:
    """SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt from now on (those not ignored)."""
    for signum in NAMES:
        if signal.getsignal(signum) is not signal.SIG_IGN:  # a background job's SIGINT, nohup's SIGHUP
            signal.signal(signum, _on_signal)


def ignore_signals() -> None:
    """Once the run has ended: its end is not to be cut short (Python's own finalization
    puts back the default handlers it installed, and a signal would then kill it)."""
    for signum in NAMES:
        signal.signal(signum, signal.SIG_IGN)


@contextmanager
def run_lifecycle():
    """Around one command: the signals end it as Ctrl-C does, and the workers it
    started are ended when it ends. The handlers before it are restored after it
    (a test may run several commands in one process)."""
    global _active
    if threading.current_thread() is not threading.main_thread():  # signals reach only the main thread
        yield
        return
    before = {signum: signal.getsignal(signum) for signum in NAMES}
    catch_signals()
    _hook_forks()
    _active = True
    try:
        yield
    finally:
        # The run has ended and said how: a signal now only ends its workers (below),
        # it cannot interrupt the ending itself.
        for signum in NAMES:
            if signal.getsignal(signum) is _on_signal:
                signal.signal(signum, _noted)
        _active = False
        _received.clear()  # the next command in this process (a test's) starts afresh
        end_children()
        end_servers()
        for signum, handler in before.items():
            if handler is _on_signal:  # python -m protocol, about to exit: leave the ending undisturbed
                continue
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def _noted(signum, frame) -> None:
    """A signal after the run has ended: nothing is left to interrupt."""


def _hook_forks() -> None:
    global _hooked
    if not _hooked and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_become_worker)
        _hooked = True


def _become_worker() -> None:
    """In a process forked during a run: a worker, which the parent's end ends."""
    global _active
    if not _active:
        return
    _active = False  # its own forks are not the run's business
    _received.clear()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
    die_with_parent()


def die_with_parent() -> None:
    """Ask the kernel to send this process SIGTERM when its parent dies (Linux's
    PR_SET_PDEATHSIG); elsewhere `end_children` is the only safeguard."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:  # the parent died before the request was made
        os._exit(1)


def end_children(grace: float = 0.5) -> None:
    """End every worker process this run started and is still alive: SIGTERM, then SIGKILL."""
    import sys

    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is None:  # never loaded: no worker started (and, out of memory, it may not load now)
        return
    end_processes(multiprocessing.active_children(), grace)


def end_servers() -> None:
    """Stop the forkserver and the resource tracker, if this run started them, and wait for
    them: left to notice the run's end by themselves, they outlived the command by a moment
    and their children were reparented (`matrix --jobs 2`). Every child is reaped before the
    command exits; the next run in this process (a test's) starts them again."""
    import gc
    import sys

    servers = [getattr(sys.modules.get(module), attribute, None)
               for module, attribute in (("multiprocessing.forkserver", "_forkserver"),
                                         ("multiprocessing.resource_tracker", "_resource_tracker"))]
    running = [server for server in servers if server is not None and (
        getattr(server, "_pid", None) is not None or getattr(server, "_forkserver_pid", None) is not None)]
    if running:
        gc.collect()  # the locks of a pool that failed to start unlink their semaphores first
    for server in running:
        try:
            server._stop()  # closes the pipe that keeps it alive, then waitpid (no public way before 3.14)
        except (OSError, AttributeError, ChildProcessError):
            pass


def end_processes(processes, grace: float) -> None:
    """SIGTERM to each of `processes`, then SIGKILL to those still alive `grace` seconds on."""
    for process in processes:
        try:
            process.terminate()
        except (OSError, ValueError):
            pass
    for process in processes:
        process.join(grace)
        if process.is_alive():
            process.kill()
            process.join(grace)


# The signals the forkserver is started with blocked (it inherits the mask across exec).
SERVER_MASK = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def forkserver_context():
    """The forkserver's context, its server started with SIGINT, SIGTERM and SIGHUP blocked.

    A terminal's Ctrl-C reaches the whole process group, and a server still loading (a
    fresh interpreter, which sets SIGINT aside only once it runs) printed a traceback; the
    workers it forks inherit the mask, so the parent alone decides what a Ctrl-C ends, as
    for forked workers. SIGTERM and SIGHUP sent to the whole group (`kill -TERM -PGID`, a
    closed terminal) killed the server with its workers, before it had reaped them: they
    were handed to process 1, which in a container often reaps nothing, and stayed zombies
    (`matrix --jobs 2`, 16 of 16 tries). Blocked, the server outlives the signal, reaps
    each worker as it dies and ends when the parent stops it (`end_servers`); the workers
    take SIGTERM and SIGHUP back at once (`worker_started`). The signal meanwhile reaches
    the parent's handler as ever (another thread takes it, or it waits for the mask to be
    lifted). The resource tracker is started under the same mask (SIGHUP killed it)."""
    import multiprocessing
    from multiprocessing import forkserver, resource_tracker

    masked = signal.pthread_sigmask(signal.SIG_BLOCK, SERVER_MASK)
    try:
        # The resource tracker ignores SIGINT and SIGTERM itself, not SIGHUP: killed by a
        # group's SIGHUP, it was relaunched and printed a traceback per semaphore it had lost.
        resource_tracker.ensure_running()
        signal.pthread_sigmask(signal.SIG_BLOCK, SERVER_MASK)  # its start unblocks SIGINT and SIGTERM
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, masked)
    return multiprocessing.get_context("forkserver")


@contextmanager
def process_pool(workers: int, context):
    """A ProcessPoolExecutor that any exit but the normal one stops at once (`stop_executor`):
    an interrupt raised anywhere in the block, even as the work is handed out, would
    otherwise leave its exit waiting for every check already given to a worker."""
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=worker_started)
    try:
        yield pool
    except BaseException:
        stop_executor(pool)
        raise
    finally:
        pool.shutdown(wait=True)  # at once when stopped


def worker_started() -> None:
    """In each worker of a pool, first: SIGTERM and SIGHUP end it again (a forkserver's worker
    inherits the server's mask, `forkserver_context`), SIGINT stays the parent's to decide, and
    it dies with its parent. A forked worker has all this from `_become_worker` already."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGHUP})
    die_with_parent()


def stop_executor(pool, grace: float = 0.5) -> None:
    """Stop a ProcessPoolExecutor now: cancel what is queued, end its processes rather than
    wait for the checks they are running, and wait for its manager thread to have closed
    the pool. Leaving that thread running made a race at exit: concurrent.futures' exit
    hook wakes the thread through a pipe the thread may be closing at that moment, and
    printed "Exception ignored in: <function _python_exit>" after the run's one line."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # no public way before 3.14
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    end_processes(processes, grace)
    if manager is not None:
        manager.join(5 * grace)  # it sees the processes gone, fails what was pending and closes the pool


def missing_dependency(error: ModuleNotFoundError) -> str | None:
    """The one line for a module the project needs that this Python lacks (an install step
    skipped, or another Python than the one it was installed in); None where the missing
    module is the project's own, which is a bug to show whole."""
    name = error.name or ""
    if not name or name.partition(".")[0] == "protocol":
        return None
    return (f"the module {name!r} is not installed in this Python ({sys.executable}): install the project "
            "and what it needs with `python -m pip install .` (the README's quick start)")
