"""Shared-nothing parallel breadth-first search over a `Model`: the coordinator. Knows nothing of the protocol.

States are hash-partitioned: each `Partition` (partition.py; a worker process,
or a Ray actor) owns the states whose owner is its index, keeps their
seen-set, expands its share of each breadth-first level and sends every
successor it does not own to its owner, in one batch of raw bytes per owner
and level (the wire format: wire.py). The search is level-synchronous: the
coordinator (`explore_parallel`) runs one level at a time, expand then
admit, and relays the batches. Liveness is decided where the edges lie, or
on the graph gathered here (distributed_liveness.py). The worker processes
and their pipes are `ProcessPool`; Ray's actors are cluster.py's `RayPool`.

Determinism, whatever N. The partitions keep no parents: which states lie
at which depth does not depend on N, and that is all the counts need. The
violations are noted per level (the least key among the violating states of
the first level where a property fails; for a transition property, the least
(source key, label)), which gives each one's length. A trace is one worker's:
after the search the coordinator runs the sequential search again over the
levels before the deepest violation, and takes the first violation of each
property in its order (`ParallelExploration.one_worker`), as `--workers 1`
prints it. A state's *key* XORs its component fingerprints (each process's
multiplied by its position's odd factor) into 64 bits; keys order states
deterministically. Only to find a lasso are the edges gathered, the states
numbered globally by (level, key) for it. So counts, depth, verdicts,
shortest lengths and traces are one worker's, and lassos the same for every
N >= 2.
"""

from __future__ import annotations

import os
import signal
import time
import traceback
from functools import partial
from typing import Callable

from protocol.engine import Model, ModelError, WorkerLost
from protocol.engine.partitioned.liveness import DistributedLiveness
from protocol.engine.interface import Counts, Run, Unavailable
from protocol.engine.liveness import FairGraph
from protocol.engine.partitioned.partition import Partition
from protocol.engine.partitioned.wire import ComponentCollision, canonical, fingerprint

__all__ = ["ComponentCollision", "ParallelExploration", "Partition", "ProcessPool", "WorkerLost", "available_cores",
           "canonical", "explore_parallel", "fingerprint"]


def sendable(error: BaseException) -> BaseException | None:
    """`error` itself where it crosses a pipe (pickles and comes back), else None."""
    import pickle

    try:
        return pickle.loads(pickle.dumps(error))
    except Exception:
        return None


# ------------------------------------------------------------------ worker processes


def serve(connection, model_factory, index, count, record_edges, kind=None) -> None:
    """A worker process: build the partition (a `Partition`, or `kind`'s), then answer
    (method, arguments) until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's to handle
    try:
        partition = (kind or Partition)(model_factory, index, count, record_edges)
    except BaseException as error:
        connection.send(("error", (traceback.format_exc(limit=4), sendable(error))))
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
            connection.send(("error", (f"{type(error).__name__}: {error}", sendable(error))))


class ProcessPool:
    """Partitions in forked worker processes, called over pipes, all at once; `kind`
    builds them (a class called as `Partition` is; `Partition` itself by default)."""

    def __init__(self, model_factory, count: int, record_edges: bool, kind=None):
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.connections, self.processes = [], []
        for index in range(count):
            mine, theirs = context.Pipe()
            process = context.Process(target=serve, args=(theirs, model_factory, index, count, record_edges, kind),
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
            text, error = value
            if isinstance(error, ModelError):  # the model broke a contract, in that worker as it would here
                raise error
            raise WorkerLost(f"worker {index} (pid {self.processes[index].pid}) failed: "
                             f"{text.strip().splitlines()[-1]}", error)
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


class ParallelExploration(DistributedLiveness, Run):
    """What `explore_parallel` found (its `Run`): the counts of `checker.Exploration`,
    violations chosen deterministically, and paths and states fetched from the
    partitions while the pool is open (until `close`)."""

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
        self.flags = None  # per worker, per pair of the property last screened: (a trigger, a stall) here
        self.pool_unsettled = False  # Ctrl-C while deciding liveness: the pipes may hold unread answers
        self.model_factory = None  # what the partitions explore: for one worker's traces (`one_worker`)
        self.violation_levels: dict = {}  # name -> ("state" | "step", the level of its state or step's source)
        self.sequential = None  # the sequential search `one_worker` made

    # ------------------------------------------------------------ the Run interface

    def counts(self) -> Counts:
        return Counts(self.distinct_states, self.transitions, self.depth, None, tuple(self.level_sizes))

    def violated(self) -> list[str]:
        return [] if self.interrupted else list(self.violations)  # the workers are stopped: no trace

    def first_reached(self, predicates: dict) -> dict:
        if self.interrupted:
            raise Unavailable("the workers were stopped")
        found = dict.fromkeys(predicates)
        for levels in self.pool.call("first_reached", [(predicates,)] * len(self.sizes)):
            for name, level in levels.items():
                if level is not None and (found[name] is None or level < found[name]):
                    found[name] = level
        return found

    @property
    def liveness_decidable(self) -> bool:
        return self.complete and self.edges_recorded and not self.interrupted

    def decide_liveness(self, model: Model) -> dict:
        try:
            return super().decide_liveness(model)
        except KeyboardInterrupt:
            self.pool_unsettled = True
            raise

    def holds_in_place(self, name: str, pairs) -> tuple | None:
        if not self.liveness_holds(partial(liveness_pairs, name)):
            return None
        triggered = [any(found[pair][0] for found in self.flags) for pair in range(len(pairs))]
        return self._premises(name, triggered)

    def fair_graph(self, model: Model) -> FairGraph:
        self.gather_edges()
        family_of = {instance.label: instance.family for instance in model.instances}
        return FairGraph(self.distinct_states, self.edge_src, self.edge_label, self.edge_dst, model.fair_families,
                         [family_of.get(label) for label in self.labels], enabled=self.enabled)

    def pair_masks(self, name: str, pairs) -> list:
        return self.gathered_masks(partial(liveness_pairs, name))

    def premises_reached(self, name: str, pairs, masks) -> tuple:
        return self._premises(name, [any(triggers) for triggers, _ in masks])

    def _premises(self, name: str, triggered: list) -> tuple:
        """Per pair, whether its premise was reached: where no trigger shows it, the
        partitions look among their states."""
        looking = [i for i, found in enumerate(triggered) if not found]
        if looking:
            for found in self.pool.call("premises_reached", [(partial(liveness_pairs, name), looking)] * len(self.sizes)):
                for i, reached in zip(looking, found):
                    triggered[i] = triggered[i] or reached
        return tuple(triggered)

    def lasso_steps(self, lasso) -> tuple[list, object]:
        steps = [(None if label is None else self.labels[label], self.state(state_id))
                 for label, state_id in lasso.steps]
        return steps, None if lasso.back is None else self.labels[lasso.back]

    def report(self) -> dict:
        if self.interrupted:
            return {}
        return {"parallel": {"workers": len(self.sizes), "bytes_exchanged": self.bytes_exchanged,
                             "worker_peak_bytes": self.worker_memory, "level_sizes": self.level_sizes,
                             "graph_gathered": self.gathered}}

    def close(self) -> None:
        """Stop the workers, once each has said its peak memory (liveness, decided in them
        or not, is done too), unless a Ctrl-C left their answers unread."""
        if self.interrupted:
            return  # explore_parallel stopped them already
        if not self.pool_unsettled:
            self.worker_memory = self.pool.call("memory", [()] * len(self.sizes))
        self.pool.close()

    def locate(self, state_id: int) -> tuple[int, int]:
        return self.owner_of[state_id], self.local_of[state_id]

    def state(self, state_id: int):
        worker, local = self.locate(state_id)
        return self.pool.call_one(worker, "readable", local)

    def counterexample(self, name: str):
        """One worker's trace: the first violation of `name` in the sequential search's order
        (`one_worker`), which the partitions cannot tell apart from another of the same length."""
        if self.violations.get(name) is None or self.interrupted:
            return None
        return self.one_worker().counterexample(name)

    def one_worker(self):
        """The sequential packed search over the levels that hold the violations found, whose
        first violation of each property is the one a single worker prints (the partitions
        know each violation's length, not which of its equals breadth-first order meets first).
        Searched once, expanding the states of the levels before each violation's (a violated
        step: its source's level too)."""
        if self.sequential is None:
            from protocol.engine.fast import explore_model

            expanded = max(level if kind == "step" else level - 1 for kind, level in self.violation_levels.values())
            self.sequential = explore_model(self.model_factory(), expand_at_most=sum(self.level_sizes[:expanded]))
        return self.sequential

    def initial_ids(self) -> list[int]:
        ids = self.pool.call("initial_ids", [()] * len(self.sizes))
        return sorted(self.global_ids[worker][local] for worker, locals_ in enumerate(ids) for local in locals_)

def explore_parallel(model_factory: Callable[[], Model], workers: int, *, record_edges: bool = False,
                     stop_on_violation: bool = False, max_states: int | None = None,
                     on_progress: Callable | None = None, pool=None,
                     run_type: type | None = None) -> ParallelExploration:
    """Explore the model `model_factory()` builds with `workers` partitions (forked worker
    processes unless `pool` gives others, e.g. Ray actors). The pool stays open on the
    result (`run.pool`) for paths and liveness: close it with `run.pool.close()`.
    `run_type` (a `ParallelExploration`) is the result's class.

    `max_states` and `stop_on_violation` stop at the end of a level: the counts of
    such a cut run are those of whole levels, not the sequential search's."""
    from protocol.engine.checker import Progress

    started = time.perf_counter()
    labels = model_factory().labels
    if pool is None:
        pool = ProcessPool(model_factory, workers, record_edges)
    run = (run_type or ParallelExploration)(pool, labels)
    run.model_factory = model_factory
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
        run.violation_levels[name] = ("state", run.depth)
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
        run.violation_levels[name] = ("step", run.depth)
    return list(found)


def liveness_pairs(name: str, model: Model) -> list:
    """The leads-to pairs of property `name` (a partition builds its own model)."""
    return model.liveness[name]


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
