"""The checking engine: breadth-first search, liveness, the packed-state engine,
symmetry and fingerprints. It knows nothing of the read-hold protocol.

A model hands the engine a `Model` (as stateright's `Model` trait does):
its initial states, its action instances (each with a label, a step
function, the process it acts on, its footprint and its fairness family),
how a state splits into global and per-process components, its properties
for the configuration at hand, and whether its processes are
interchangeable. `protocol/model/next.py` builds one for a configuration.
"""

from __future__ import annotations

from typing import Callable, Hashable, NamedTuple, Sequence

import attrs


class Refusal(ValueError):
    """The engine cannot check what was asked (for example symmetry on a model whose
    processes are not interchangeable): one line saying why and what to drop."""


class ModelError(AssertionError):
    """The model breaks a contract the engine relies on (an action reads a variable its
    footprint does not name, ...): one line naming the action and the variable."""


class WorkerLost(RuntimeError):
    """A worker or helper process died (killed, out of memory) or failed: the run has no
    verdict. `error` is the exception a failing worker raised, where it could be sent
    back (None otherwise), for the coordinator to tell a refusal (vector.WideKeys) from a fault."""

    def __init__(self, message: str, error: BaseException | None = None):
        super().__init__(message)
        self.error = error


class Label(tuple):
    """An action instance: its name and arguments, printed as TLA+ would: `Publish(1)`."""

    def __new__(cls, name: str, *args):
        return super().__new__(cls, (name, *args))

    @property
    def name(self) -> str:
        return self[0]

    @property
    def args(self) -> tuple:
        return self[1:]

    def __getnewargs__(self) -> tuple:  # pickled (to a worker and back) as Label(name, *args)
        return tuple(self)

    def __str__(self) -> str:
        if not self.args:
            return self.name
        return f"{self.name}({', '.join(map(str, self.args))})"

    __repr__ = __str__


# Footprints: what an action instance reads and writes, which lets the packed
# engine run it once per distinct value of what it reads (engine/fast.py).
CONTROLLER = "controller"  # reads the globals; writes them and appends alike to every process's locals
LOCAL = "local"  # reads and writes its process's locals (and reads the globals in `reads`)
WIDE = "wide"  # reads its process's locals and the globals; writes both and appends to the others
WHOLE = "whole"  # a controller instance that reads and writes every component: run on the whole state
# A controller instance whose guard and effect on the globals read only the globals, and
# which rewrites each process's locals by what it reads of the globals and that process's
# locals alone (a broadcast each process takes by its own state): memoised per pair of
# globals and one process's locals where an engine can (vector/whole.py), else run whole.
EACH = "each"


@attrs.frozen
class Footprint:
    kind: str
    reads: tuple = ()  # with LOCAL: the global variables it also reads
    # With LOCAL: local variables it neither reads nor writes. The packed engine then runs
    # it once per value of the others, whatever these hold (each write, and a sample of
    # the values it is not run on, is checked: fast.py, `local_next`).
    untouched: tuple = ()
    # With LOCAL: (a global it reads, bound(state, cfg, p)): the action reads that global
    # only up to the bound, which it computes from p's locals: every value at or above it
    # gives the same step (None: no bound). Only validate uses it, to share the closure of
    # one set of locals among globals that differ in that value alone; each bound and each
    # such sharing is checked (tools/factored.py, `bound_over`, `steps_alike`).
    ceiling: tuple = ()


@attrs.frozen
class Instance:
    """One action instance of the next-state relation, in enumeration order."""

    label: Label
    step: Callable  # state -> next state, or None where the guard does not hold
    process: int | None  # the process it acts on (its label's first argument), None: none
    footprint: Footprint
    family: Hashable | None  # its weak-fairness family, None where it is never fair


def instance_problem(instance: Instance, processes: int) -> str | None:
    """What in an instance breaks the engine's contract, with the fix; None when nothing does.

    The engines key a per-process instance's memo by its family (the label without its
    process, which must be the label's first argument), and run a local or wide footprint
    on the process the instance names."""
    kind, process, label = instance.footprint.kind, instance.process, instance.label
    if kind not in (CONTROLLER, LOCAL, WIDE, WHOLE, EACH):
        return f"unknown footprint kind {kind!r}: use one of controller, local, wide, whole, each"
    if kind in (LOCAL, WIDE) and process is None:
        return f"a {kind} footprint acts on one process, but the instance names none: give it its process"
    if process is None:
        return None
    if not 0 <= process < processes:
        return f"acts on process {process}, outside 0 .. {processes - 1}"
    if not label.args or label.args[0] != process:
        return (f"acts on process {process}, which must be its label's first argument "
                "(the engines group instances by the rest of the label)")
    return None


class Layout(NamedTuple):
    """How a state splits: a NamedTuple whose `globals` fields hold one value and whose
    `locals` fields hold a tuple with one value per process."""

    state_type: type
    globals: tuple
    locals: tuple


# What a leads-to predicate reads: the whole state, only the globals, only the locals of
# the pair's process, or the globals and the locals of the pair's process (an engine that
# stores components evaluates it once per globals, locals, or pair of them).
STATE, GLOBALS, PROCESS, PAIR = "state", "globals", "process", "globals and process"


@attrs.frozen
class LeadsTo:
    """`premise ~> conclusion`: in every fair behaviour, whenever the premise holds,
    the conclusion holds then or at some later state."""

    premise: Callable[[object], bool]
    conclusion: Callable[[object], bool]
    text: str  # how a reviewer reads it, e.g. "sent >= 1 ~> since[0] >= 1"
    # The process the pair speaks of (None: no process in particular), and what the
    # pair says apart from it: renaming the processes by f maps this pair to the one
    # with the same `form` about process f(process).
    process: int | None = None
    form: Hashable = None
    # What each predicate reads (STATE, GLOBALS, PROCESS or PAIR, above): an engine that
    # stores components evaluates a predicate that reads less than the whole state once
    # per component (or pair of them), on a state whose every process has the same locals.
    premise_reads: str = STATE
    conclusion_reads: str = STATE


@attrs.frozen
class Thresholds:
    """A family of leads-to pairs judged by its form: for every process p and every time t in
    1 .. `times`, `premise_value(s) >= t ~> conclusion_value(s, p) >= t`, where the premise
    reads only the globals and the conclusion only process p's locals. An engine may list
    the pairs (`pairs`, in process-major order), or decide them by their values: the pairs
    pending in a state, or whether the premises can only grow along a step, without one
    predicate call per time (the family has P x `times` pairs, up to millions)."""

    premise_value: Callable[[object], int]
    conclusion_value: Callable[[object, int], int]
    processes: int
    times: int
    make_pair: Callable[[int, int], "LeadsTo"]  # (p, t) -> the pair, as `pairs` lists it

    def pairs(self) -> list:
        return [self.make_pair(p, t) for p in range(self.processes) for t in range(1, self.times + 1)]

    def index(self, p: int, t: int) -> int:
        """The position of pair (p, t) in `pairs`."""
        return p * self.times + t - 1

    def pending_times(self, premise: int, conclusion: int) -> range:
        """The times t whose premise holds (t <= premise) and whose conclusion does not (t > conclusion)."""
        return range(max(conclusion, 0) + 1, min(premise, self.times) + 1)


def pair_permutation(pairs: Sequence[LeadsTo], process_map: Sequence[int]) -> tuple[int, ...]:
    """Where renaming process q to process_map[q] sends each pair: index -> index.

    Raises ValueError when the pairs are not closed under the renaming (a pair
    about a process with no counterpart), for then one pair's verdict cannot
    stand for its orbit's.
    """
    index = {(pair.process, pair.form): i for i, pair in enumerate(pairs)}
    if len(index) < len(pairs):
        raise ValueError("two leads-to pairs share a process and a form: give each its own form")
    mapped = []
    for pair in pairs:
        key = (None if pair.process is None else process_map[pair.process], pair.form)
        if key not in index:
            raise ValueError(f"{pair.text} has no counterpart when the processes are renamed")
        mapped.append(index[key])
    return tuple(mapped)


def owner_text(instance: Instance) -> str:
    """How a refusal names an instance: a per-process one by its family, `Bump(p, 3)`, since
    every process's instance acts alike; any other by its label."""
    label = instance.label
    if instance.process is None or not label.args or label.args[0] != instance.process:
        return str(label)
    return str(Label(label.name, "p", *label.args[1:]))


@attrs.frozen
class Model:
    """Everything the engine needs of a model, for one configuration."""

    initial_states: list
    instances: list  # of Instance, in enumeration order
    layout: Layout
    processes: int
    invariants: dict  # name -> predicate on a state, in report order
    transition_properties: dict  # name -> predicate on (before, after)
    # The invariants that are a conjunction of a check on the globals and a check on
    # each process's locals (each check reading only its component), and the
    # transition properties that hold of a step exactly when they hold of the
    # component it rewrites: the packed engine checks these once per component.
    by_component: frozenset
    liveness: dict  # name -> [LeadsTo], decided under the fairness of `fair_families`
    fair_families: list  # the weak-fairness families, in order; empty: nothing is fair
    symmetry_refusal: str | None  # why processes are not interchangeable; None: they are
    # The invariants that are a conjunction, over the processes, of a check reading the
    # globals and that process's locals: the packed engine checks each pair once.
    by_pair: frozenset = frozenset()
    # by-pair invariant name -> the globals it reads, where it declares them (else every global):
    # validation by components judges it once per value of those and a process's locals,
    # checking the declaration on a sample (tools/factored.py)
    pair_reads: dict = attrs.Factory(dict)
    # (label, step) per instance, as `successors` runs them (set when the model is built)
    readable_steps: list = attrs.field(init=False, factory=list, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        for instance in self.instances:
            problem = instance_problem(instance, self.processes)
            if problem is not None:
                raise ModelError(f"{instance.label}: {problem}")
        for name, reads in self.pair_reads.items():
            unknown = [read for read in reads if read not in self.layout.globals]
            if name not in self.by_pair or unknown:
                raise ModelError(f"{name} declares the globals it reads as a by-pair invariant, but "
                                 + (f"{unknown[0]!r} is not a global variable" if unknown else "it is not by_pair")
                                 + ": name only globals, and only for a by-pair invariant")
        labels = [instance.label for instance in self.instances]
        if len(set(labels)) < len(labels):
            twice = next(label for label in labels if labels.count(label) > 1)
            raise ModelError(f"{twice} is listed twice: give each action instance its own label")
        # Every engine runs the instances as given here: each per-process step handed a view of
        # what its footprint declares, its writes checked, and a controller step checked against
        # itself on the initial locals (engine/views.py). `successors`, the readable search's,
        # checks a sample of its evaluations (views.sampled): its own figures cannot be wrong for
        # a step that reads past its footprint, and every other engine checks each memo it fills.
        from protocol.engine.views import checked_step, sampled

        initial = self.initial_states[0] if len(self.initial_states) == 1 else None
        raw = [instance.step for instance in self.instances]
        object.__setattr__(self, "instances", [attrs.evolve(instance, step=checked_step(
            instance.step, self.layout, instance.footprint, instance.process, owner_text(instance), initial))
            for instance in self.instances])
        object.__setattr__(self, "readable_steps", [(instance.label, sampled(step, instance.step))
                                                    for step, instance in zip(raw, self.instances)])

    @property
    def labels(self) -> list:
        return [instance.label for instance in self.instances]

    def successors(self, state) -> list:
        """[(label, next state)] of every enabled instance, in enumeration order."""
        out = []
        for label, step in self.readable_steps:
            after = step(state)
            if after is not None:
                out.append((label, after))
        return out

    def refuse_unless_symmetric(self, name: str = "this configuration") -> None:
        if self.symmetry_refusal is not None:
            raise Refusal(f"--symmetry needs interchangeable processes, but {name} "
                          f"{self.symmetry_refusal}: drop --symmetry")
