"""Helper processes that run the readable actions and checks beside the vector search. Knows nothing of the protocol.

Filling the vector engine's tables runs the readable actions once per new
component, checks the by-component invariants on each new local and the
by-pair invariants on each new pair, all in Python: under the interpreter's
lock, threads cannot share it, and in the levels where most components are
met it is most of the work. So `--workers N` forks N - 1 helper processes
at the first large batch (the model built: they inherit it) and, for each
large batch of missing table entries, hands each every N-th entry while the
search evaluates its own; they answer with values (the next locals, the
verdicts, and which invariants each locals value they met new fails), never
ids. The search then fills the table as it does alone, in the same order,
interning the values in the packed engine (`Engine.local_successor` given
the next local, `Engine.checked` for the checks): the components get the
ids they get without helpers, and the states, ids, edges and verdicts are
one worker's (tests/test_threads.py).

A helper only evaluates: it keeps a copy of the components interned (sent
it before each batch, the ones new since the last) and never interns. A step
that fails a property watched per component, or writes outside its process's
locals, it leaves to the search, which runs it again and records or reports
it as one worker does. A helper ignores Ctrl-C (the search ends it), and
ends when the search closes its end of the pipe or is gone.

Where the run keeps its edges, the helpers outlive the search: deciding
liveness evaluates each leads-to side once per component met (`ComponentTruth`),
in Python, while the thread that finds the cycles needs the interpreter's
lock for its numpy calls. So a large batch of a side's entries goes to the
helpers whole (`truths`), the property's thread waiting without the lock. A
side is named by its property, its pair's index and its text; a helper whose
model lists another pair there answers nothing, and the property's thread
evaluates the batch itself, as it does where there are no helpers.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
import time
from multiprocessing import Pipe


from protocol.engine import WorkerLost
from protocol.engine.fast import UNEVALUATED, Engine

# A batch of missing entries smaller than this is evaluated by the search alone: a
# round trip to a helper costs about what a few dozen evaluations do.
SHARED_AT_LEAST = 64


def pair_verdict(engine: Engine, holds, g: int, lid: int) -> int:
    """By-pair invariant `holds` on the state whose every process has locals `lid` under globals `g`: 1 or 0."""
    return int(bool(holds(engine.assemble(engine.globals[g], [engine.locals[lid]] * engine.P))))


def evaluate(engine: Engine, kind: tuple, rows: list, columns: list) -> tuple[list, dict]:
    """The entries (row, column) of table `kind` evaluated, interning nothing: (per entry
    its value, UNEVALUATED where the search must run it itself; per locals value met that
    the engine has not interned, the by-component invariants it fails). Where the model
    raises, the entry is left to the search, which runs the entries in order and so
    raises where one worker does, on the first entry that raises."""
    checked: dict = {}

    def met(value) -> None:
        if value is not None and value is not UNEVALUATED and value not in engine.local_ids and value not in checked:
            checked[value] = engine.failing_local(value)

    def local(projection: int, lid: int):
        value = engine.local_next(kind[1], lid, projection, record=False)
        met(value)
        return value

    def appended(app: int, lid: int):  # the value is the engine's to build (cheaply); its checks are the cost
        if app:
            met(engine.appended_value(app, lid))
        return UNEVALUATED

    def pair(g: int, lid: int) -> int:
        return pair_verdict(engine, engine.readable_invariants[kind[1]], g, lid)

    evaluation = {"local": local, "append": appended, "pair": pair}[kind[0]]
    values = []
    for row, column in zip(rows, columns):
        try:
            values.append(evaluation(row, column))
        except Exception:
            values.append(UNEVALUATED)
    return values, checked


def truth_values(engine: Engine, probes, side: tuple, reads: str, entries: list) -> list:
    """A leads-to side on the probe of each table entry (`liveness.ComponentTruth`):
    `side` is (property name, pair index, 0 for the premise or 1 for the conclusion,
    the pair's text). Nothing where this copy's model lists another pair there."""
    from protocol.engine.vector.liveness import collector_paused

    name, index, which, text = side
    pairs = engine.model.liveness.get(name) or ()
    pair = pairs[index] if index < len(pairs) else None
    if pair is None or pair.text != text or (pair.premise_reads, pair.conclusion_reads)[which] != reads:
        return []
    predicate = (pair.premise, pair.conclusion)[which]
    with collector_paused():
        return [bool(predicate(probes.of(reads, at))) for at in entries]


class Helpers:
    """The helper processes of one search, and what they cost: `cpu` (their CPU seconds),
    `beside` (those spent while the search evaluated its own share, the shorter of the
    two per batch) and `waited` (the CPU seconds the search waited for them past its
    own share), which threads.py counts into the search's critical path."""

    def __init__(self, engine: Engine, count: int):
        self.engine, self.count = engine, count
        self.sent = self.sizes()  # what the helpers' copies hold
        self.cpu = self.beside = self.waited = 0.0
        self.peak_bytes: list[int] = []  # per helper ended, its peak resident bytes (0 where not told)
        self.answered = 0  # the entries the helpers evaluated
        self.children: list[tuple[int, object]] = []  # (pid, connection)
        self.lock = threading.Lock()  # one batch at a time: the liveness properties' threads share them

    def help_with(self, entries: int) -> bool:
        """Whether a batch of this many missing entries is shared with the helpers; they
        are forked for the first one (a small search, which has none, forks nothing)."""
        if not self.count or entries < SHARED_AT_LEAST:
            return False
        if not self.children:
            self.start()
        return True

    def start(self) -> None:
        """Fork the helpers: copies of the engine as it is now. The search's pool threads
        may be sorting meanwhile: a helper is a copy of this one thread, and touches
        nothing of theirs (no array, no lock) before it ends."""
        self.sent = self.sizes()
        try:
            for _ in range(self.count):
                self.children.append(self.fork())
        except BaseException:
            self.close()
            raise

    def sizes(self) -> dict:
        engine = self.engine
        return {"globals": len(engine.globals), "locals": len(engine.locals), "appends": len(engine.appends),
                **{("projections", family): len(values) for family, values in engine.projections.items()}}

    def fork(self) -> tuple[int, object]:
        mine, theirs = Pipe()
        pid = os.fork()
        if pid == 0:  # the helper: it never returns into the search
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                for signum in (signal.SIGTERM, signal.SIGHUP):  # not the search's handlers: just end
                    signal.signal(signum, signal.SIG_DFL)
                mine.close()
                serve(self.engine, theirs)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        theirs.close()
        return pid, mine

    def news(self) -> dict:
        """The components interned since the helpers were last sent them."""
        engine, now = self.engine, self.sizes()
        news = {"globals": engine.globals[self.sent["globals"]:], "locals": engine.locals[self.sent["locals"]:],
                "appends": engine.appends[self.sent["appends"]:]}
        for family, values in engine.projections.items():
            news[("projections", family)] = values[self.sent[("projections", family)]:]
        self.sent = now
        return news

    def share(self, kind: tuple, rows: list, columns: list) -> list:
        """The missing entries (rows[i], columns[i]) of table `kind` evaluated, a share per
        process (every n-th entry: neighbours cost alike), per entry its value (for a
        local table the next local, for a pair table the verdict; UNEVALUATED for an
        append table and where the search must run it itself). The checks of the
        locals met go to the engine's `checked`, until `forget`."""
        with self.lock:
            return self._share(kind, rows, columns)

    def _share(self, kind: tuple, rows: list, columns: list) -> list:
        n = len(self.children) + 1
        news = self.news()
        for k, (pid, connection) in enumerate(self.children, start=1):
            sent(pid, connection, (news, kind, rows[k::n], columns[k::n]))
        started = time.thread_time()
        values = [UNEVALUATED] * len(rows)
        values[0::n], checked = evaluate(self.engine, kind, rows[0::n], columns[0::n])
        mine = time.thread_time() - started
        self.engine.checked.update(checked)
        theirs = []
        for k, (pid, connection) in enumerate(self.children, start=1):
            (answer, checked), cpu = answered(pid, connection)
            if answer:
                values[k::n] = answer
                self.answered += len(answer)
            self.engine.checked.update(checked)
            theirs.append(cpu)
        self.cpu += sum(theirs)
        self.beside += min(mine, max(theirs)) + sum(theirs) - max(theirs)
        self.waited += max(max(theirs) - mine, 0.0)
        return values

    def truths(self, side: tuple, reads: str, entries: list) -> list | None:
        """A leads-to side (`truth_values`) on each of `entries`, evaluated by the helpers
        alone, every n-th entry by each: the calling thread waits without the
        interpreter's lock. None where there are no helpers, the batch is small, or a
        helper answered nothing (the caller evaluates it itself)."""
        if not self.children or len(entries) < SHARED_AT_LEAST:
            return None
        with self.lock:
            n, news = len(self.children), self.news()
            for k, (pid, connection) in enumerate(self.children):
                sent(pid, connection, (news, ("truth", side, reads), entries[k::n], None))
            values, whole = [False] * len(entries), True
            for k, (pid, connection) in enumerate(self.children):
                (answer, _checked), cpu = answered(pid, connection)
                self.cpu += cpu
                whole = whole and len(answer) == len(entries[k::n])
                if whole:
                    values[k::n] = answer
        return values if whole else None

    def forget(self) -> None:
        """Drop the checks of a batch's locals the fill did not take (interned before)."""
        self.engine.checked.clear()

    def close(self) -> None:
        """End and reap every helper (at once: one busy with a batch is not waited for)."""
        children, self.children = self.children, []
        for pid, connection in children:
            self.peak_bytes.append(peak_resident_bytes(pid))
            connection.close()
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pid, _connection in children:
            os.waitpid(pid, 0)


def peak_resident_bytes(pid: int) -> int:
    """The peak resident memory of live process `pid` (Linux's VmHWM), 0 where not told."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return 0


def sent(pid: int, connection, batch: tuple) -> None:
    """`batch` sent to helper `pid`; WorkerLost where it is gone."""
    try:
        connection.send(batch)
    except OSError:  # a broken pipe: never the terminal's, which the search reports as such
        raise lost(pid) from None


def answered(pid: int, connection) -> tuple:
    """Helper `pid`'s answer to its batch and the CPU seconds it took; WorkerLost where it is gone."""
    try:
        return pickle.loads(connection.recv_bytes()), connection.recv()
    except (EOFError, OSError):
        raise lost(pid) from None


def lost(pid: int) -> WorkerLost:
    return WorkerLost(f"helper process {pid} ended during the run (killed, or out of memory?): no verdict; "
                      "run it again, or with --workers 1")


def serve(engine: Engine, connection) -> None:
    """A helper's loop: take the components new since the last batch, evaluate the batch,
    answer (values, checks, CPU seconds); until the search closes the pipe. Where the
    evaluation raises (a model's error) or its values do not pickle, it answers with
    nothing evaluated: the search then runs the share itself, and reports what it meets
    as one worker does."""
    probes = None  # the states the leads-to sides are evaluated on, made once liveness asks
    while True:
        try:
            news, kind, rows, columns = connection.recv()
        except EOFError:
            return
        started = time.process_time()
        learn(engine, news)
        try:
            if kind[0] == "truth":
                if probes is None:
                    from protocol.engine.vector.liveness import Probes

                    probes = Probes(engine)
                values = truth_values(engine, probes, kind[1], kind[2], rows)
                answer = pickle.dumps((values, {}), pickle.HIGHEST_PROTOCOL)
            else:
                answer = pickle.dumps(evaluate(engine, kind, rows, columns), pickle.HIGHEST_PROTOCOL)
        except Exception:
            answer = pickle.dumps(([], {}))
        connection.send_bytes(answer)
        connection.send(time.process_time() - started)


def learn(engine: Engine, news: dict) -> None:
    """A helper's copy of the components extended with those the search interned since."""
    engine.local_ids.update((value, lid) for lid, value in enumerate(news["locals"], start=len(engine.locals)))
    engine.locals.extend(news["locals"])
    engine.globals.extend(news["globals"])
    engine.appends.extend(news["appends"])
    for family, values in engine.projections.items():
        values.extend(news[("projections", family)])
