"""Checking a named configuration: explore it, give every property a verdict,
and compare the verdicts with what the configuration expects.
"""

from __future__ import annotations

import os
import time

from typing import Callable

import attrs

from protocol import properties as props
from protocol.properties import reachable

from protocol.model.config import ConfigError
from protocol.configurations.named import NamedConfig
from protocol.engine import Label, Model, Refusal
from protocol.engine.checker import Progress
from protocol.engine.fast import explore_model
from protocol.engine.interface import LassoRun, Run, Unavailable
from protocol.model.next import model_for
from protocol.model.trace import Trace, trace_from_path


ENGINES = ("packed", "vector")


def explore_config(cfg, engine: str | None = None, *, fingerprints: bool = False, **options) -> Run:
    """Explore configuration `cfg` with the vector engine where it applies
    (`engine.vector.explore_vector`), else with the packed one
    (`engine.fast.explore_model`); `engine` names one. `run.engine_choice` says
    which ran and, where the default fell back, why."""
    load_scipy()  # the vector engine's modules, which choose_engine reads whichever engine runs, need it
    from protocol.engine.vector.explore import explore_vector

    model = model_for(cfg)
    try:
        return choose_engine(model, engine, lambda: explore_vector(model, **options),
                             lambda: explore_model(model, fingerprints=fingerprints, **options),
                             fingerprints=fingerprints)
    except Refusal as refusal:
        raise ConfigError(str(refusal)) from None


# What loading scipy adds to the address space (its OpenBLAS reserves buffers per thread as it
# loads), and numpy, which it loads first: with one BLAS thread, as `python -m protocol` asks unless
# the user says otherwise, 104 and 81 MB here; with two or more, 144 and 121 MB. Under a lower limit
# (ulimit -v) the import fails with an ImportError, or OpenBLAS retries its allocation for ever.
ADDRESS_SPACE_ONE_THREAD = {"scipy": 120 << 20, "numpy": 100 << 20}
ADDRESS_SPACE_THREADS = {"scipy": 160 << 20, "numpy": 140 << 20}


def load_scipy() -> None:
    """Import scipy's graph algorithms (liveness, the vector engine), or say in one line why this
    process cannot."""
    import sys

    from protocol.exits import RunFailure  # a failed run's one line, exit 4

    if "scipy.sparse.csgraph" in sys.modules:
        return
    left = address_space_left()
    one = os.environ.get("OPENBLAS_NUM_THREADS") == "1"
    space = ADDRESS_SPACE_ONE_THREAD if one else ADDRESS_SPACE_THREADS
    needed = space["scipy"] + (0 if "numpy" in sys.modules else space["numpy"])
    fix = "raise the limit (ulimit -v): every search loads them"
    if left is not None and left < needed:
        raise RunFailure(f"the address-space limit leaves {left >> 20} MB, and loading numpy and scipy needs about "
                         f"{needed >> 20} MB: {fix}")
    try:
        import scipy.sparse.csgraph  # noqa: F401
    except ModuleNotFoundError:
        raise  # not installed: the dispatch's one line says how to install it
    except ImportError as error:  # a library that cannot be mapped (a memory limit), a broken install
        raise RunFailure(f"cannot load scipy ({error}): {fix}") from None


def address_space_left() -> int | None:
    """The bytes this process may still map under its address-space limit (ulimit -v), or None
    where there is no limit (or it cannot be read)."""
    import resource

    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    if limit == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status") as status:
            size = next(int(line.split()[1]) << 10 for line in status if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return None
    return max(limit - size, 0)


def choose_engine(model: Model, engine: str | None, vector: Callable[[], Run], packed: Callable[[], Run],
                  fingerprints: bool = False) -> Run:
    """The run of the vector engine (`vector()`) where it applies and `engine` does not
    name the packed one, else of the packed engine (`packed()`), with `run.engine_choice`
    saying which ran and, where the default fell back, why: the vector engine refuses the
    model (`vector_refusal`), or its keys outgrow the words it has (`WideKeys`, found
    while exploring). `engine="vector"` refuses instead of falling back."""
    from protocol.engine.vector.search import WideKeys, vector_refusal

    why = vector_refusal(model, fingerprints=fingerprints)
    if why is None and engine != "packed":
        try:
            run = vector()
            run.engine_choice = {"name": "vector"}
            return run
        except WideKeys as wide:
            why = str(wide)
    if engine == "vector":
        raise ConfigError(f"--engine vector cannot check this: {why}; drop --engine vector")
    run = packed()
    run.engine_choice = {"name": "packed", **({"why": why} if engine != "packed" else {})}
    return run


@attrs.frozen
class Verdict:
    """A property's verdict: True holds, False violated, None unknown (search cut short)."""

    holds: bool | None
    trace: Trace | None = None
    # A liveness property that holds with none of its premises ever reached holds vacuously;
    # `premises` says per leads-to pair whether its premise was reached (None: not decided).
    vacuous: bool = False
    premises: tuple | None = None

    @property
    def trace_length(self) -> int | None:
        return self.trace.length if self.trace is not None else None


@attrs.frozen
class CheckResult:
    named: NamedConfig
    distinct_states: int
    transitions: int
    depth: int
    seconds: float
    complete: bool
    interrupted: bool
    properties: dict  # name -> Verdict, in the spec's order
    stopped_on_violation: bool = False
    # With symmetry: the representatives explored ("distinct states (symmetry-reduced)");
    # distinct_states and transitions stay the unreduced counts, derived from orbit sizes.
    reduced_states: int | None = None
    # With --fingerprints: TLC's estimates of the chance that two distinct states
    # shared a fingerprint, {"optimistic": p, "actual": p} (see fingerprints.py).
    fingerprint_collision: dict | None = None
    # With workers: {"workers", "bytes_exchanged", "worker_peak_bytes": [...], "level_sizes": [...],
    # "graph_gathered": whether liveness needed the whole graph on the coordinator}; with
    # threads, "worker_peak_bytes" are the helper processes' (engine/vector/helpers.py).
    parallel: dict | None = None
    # Per state predicate the configuration expects to be reachable (its `reachable`),
    # the depth where it was first reached, None where it was not; None when the run
    # keeps no states to tell (--fingerprints).
    reachable: dict | None = attrs.field(factory=dict)
    # Which engine ran: {"name": "vector"} or {"name": "packed"}, with a "why" where the
    # default vector engine did not apply.
    engine: dict | None = None
    # The vector engine's CPU seconds per part of the search and of liveness (for `bench`).
    parts: dict | None = None
    # With coverage asked for: action name -> (transitions it took, distinct states it found first),
    # in the model's order (TLC's coverage; interface.Run.coverage).
    coverage: dict | None = None

    @property
    def never_enabled(self) -> list[str]:
        """The actions a complete search never took (with coverage): a guard that never holds."""
        if self.coverage is None or not self.complete:
            return []
        return [name for name, (taken, found) in self.coverage.items() if not taken and not found]

    @property
    def config(self):
        return self.named.config

    def violation(self, prop: str) -> Trace | None:
        return self.properties[prop].trace

    def mismatches(self) -> list[str]:
        """Why the verdicts differ from what the configuration expects; empty if as expected."""
        expected = self.named.expected_violations()
        stopped = self.stopped_on_violation and any(
            self.properties[name].holds is False for name in expected if name in self.properties)
        found = [f"{name} was expected to be violated, but this configuration has no such property"
                 for name in expected if name not in self.properties]
        for name, verdict in self.properties.items():
            if name in expected:
                if verdict.holds is not False:
                    if not (stopped and verdict.holds is None):
                        found.append(f"{name} was expected to be violated, but "
                                     + ("it holds" if verdict.holds else "no violation was found"))
                elif expected[name] is not None and verdict.trace_length != expected[name]:
                    found.append(f"{name} violated in {verdict.trace_length} states, expected {expected[name]}")
            elif verdict.holds is False:
                found.append(f"{name} violated unexpectedly")
            elif verdict.holds is None and not stopped:
                found.append(f"{name} has no verdict: the check was cut short")
            elif verdict.vacuous and name in self.named.nonvacuous:
                found.append(f"{name} holds vacuously: none of its premises was reached, "
                             "and this configuration requires it not to" + self.below_own_constants())
        if self.complete:  # not reached by a search cut short: beyond the cut?
            found += [f"{name} ({reachable.doc(name)}) was never reached" + self.below_own_constants()
                      for name, depth in (self.reachable or {}).items() if depth is None]
        return found + self.count_mismatches()

    def below_own_constants(self) -> str:
        """Why a required state or premise may be missing: constants below the configuration's
        own (no peek at D=0, no time passes at MaxTime=0). A check that reaches none of what
        it was meant to check checked nothing, whatever the constants: it is still not as expected."""
        if self.at_least_own_constants:
            return ""
        own = ", ".join(f"{name}={value}" for name, value in self.named.own_constants)
        return f" (these constants are below {self.named.name}'s own, {own}, which may leave it out)"

    def count_mismatches(self) -> list[str]:
        """How a complete search's distinct states and depth differ from the pinned ones
        (compared at the configuration's own constants only)."""
        return self.named.pinned_differences(self.distinct_states, self.depth) if self.complete else []

    def reached_words(self) -> list[tuple[str, str]] | None:
        """Per state the configuration expects to exist, (what it is, where it was first
        reached) in words; None when the run keeps no states to tell."""
        if self.reachable is None:
            return None
        never = "not reached" if self.complete else "not reached (cut short)"
        return [(reachable.doc(name), never if self.reachable.get(name) is None
                 else f"at depth {self.reachable[name]}") for name in self.named.reachable]

    @property
    def at_least_own_constants(self) -> bool:
        """Whether every constant is at least the named configuration's own: where the states
        a reviewer expects (its `reachable`, the premises of its `nonvacuous`) exist. Fewer
        processes, peeks or times may leave them out (no peek at D=0); such a run is still
        not as expected, and its mismatch line says why."""
        own = self.named.own_constants
        return own is None or all(self.config.constants[name] >= value for name, value in own)

    @property
    def as_expected(self) -> bool:
        return not self.mismatches()

    @property
    def refuted(self) -> bool:
        """Whether a verdict this run decided is not as expected, however far it went: a property
        violated that should hold, an expected violation of another length or found to hold. A
        search cut short that decided nothing unexpected is only incomplete (exit 3, not 1): its
        mismatches are the verdicts it left unknown."""
        if self.complete and not self.interrupted:
            return not self.as_expected
        expected = self.named.expected_violations()
        if any(name not in self.properties for name in expected):
            return True
        for name, verdict in self.properties.items():
            if name not in expected:
                if verdict.holds is False:
                    return True
            elif verdict.holds is True:
                return True
            elif verdict.holds is False and expected[name] not in (None, verdict.trace_length):
                return True
        return False


def safety_properties(cfg):
    """The state invariants and transition properties of `cfg`, bound to it."""
    model = model_for(cfg)
    return model.invariants, model.transition_properties


def check(
    named: NamedConfig,
    *,
    max_states: int | None = None,
    stop_on_violation: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    liveness: bool = True,
    symmetry: bool = False,
    fingerprints: bool = False,
    workers: int = 1,
    cluster: str | None = None,
    engine: str | None = None,
    partitioned: bool = False,
    coverage: bool = False,
) -> CheckResult:
    """Explore `named` breadth-first and give each property its verdict.

    With `liveness` the explored graph's edges are kept and the liveness
    properties are decided on it after the safety ones; without, they are
    left out. With `symmetry` both are decided on one state per orbit.
    With `workers` > 1 on this machine, that many threads share the vector
    engine's search (engine/vector/threads.py: the same answer as one), or where
    it does not apply the packed engine's states are partitioned over that many
    worker processes (engine/partitioned); with a Ray `cluster` address they are
    partitioned over its actors (with `partitioned`, over forked processes here,
    as a cluster's would be). Every engine's result is an
    `engine.interface.Run`, and one path below gives its verdicts. `engine`
    chooses the sequential engine ("packed" or "vector"); by default the vector
    one where it applies.
    """
    started = time.perf_counter()
    if fingerprints:
        refuse_liveness_with_fingerprints(named, liveness)
    if liveness:
        # loaded before the search takes the memory: under a memory limit, a library loaded
        # after it fails to map (or its threads fail to start) where the search ran fine
        load_scipy()
    options = dict(max_states=max_states, stop_on_violation=stop_on_violation, on_progress=on_progress,
                   record_edges=liveness or coverage)
    if cluster is not None or (partitioned and workers > 1):
        run = explore_partitioned(named, workers, cluster, engine=engine, **options)
    elif workers > 1:
        run = explore_on_cores(named, workers, engine=engine, **options)
    else:  # the fast engine: same states, order, edges and verdicts as the readable model
        run = explore_config(named.config, engine=engine, symmetry=symmetry, fingerprints=fingerprints,
                             **options)
    model = model_for(named.config)
    try:
        verdicts = {name: safety_verdict(run, name) for name in [*model.invariants, *model.transition_properties]}
        interrupted = run.interrupted
        if liveness and not fingerprints:  # not asked for (or no graph kept): no verdict to report
            try:
                verdicts.update(liveness_verdicts(run, model, named.config))
            except KeyboardInterrupt:  # Ctrl-C while deciding liveness: the safety verdicts stand
                verdicts.update({name: Verdict(None) for name in model.liveness})
                interrupted = True
            except Refusal as refusal:
                raise ConfigError(str(refusal)) from None
        reached = reached_depths(run, named)
        covered = coverage_of(run, model) if coverage else None
    finally:
        run.close()
    counts = run.counts()
    return CheckResult(
        named=named,
        distinct_states=counts.distinct_states,
        transitions=counts.transitions,
        reduced_states=counts.reduced_states,
        depth=counts.depth,
        seconds=time.perf_counter() - started,  # the search and the liveness decision
        complete=run.complete,
        interrupted=interrupted,
        properties=verdicts,
        stopped_on_violation=stop_on_violation and bool(run.violated()),
        reachable=reached,
        engine=run.engine_choice,
        parts=run.parts,
        coverage=covered,
        **run.report(),
    )


def coverage_of(run: Run, model: Model) -> dict:
    """The run's coverage per action (interface.Run.coverage), in the model's order; a run that
    cannot count it is one usage line."""
    try:
        return run.coverage(model.labels)
    except Unavailable as why:
        raise ConfigError(f"--coverage: {why}") from None


def explore_on_cores(named: NamedConfig, workers: int, engine: str | None = None, **options) -> Run:
    """`--workers N` on this machine: the vector engine's search with N threads sharing
    each level (engine/vector/threads.py) where it applies, else the packed engine's
    states partitioned over N forked worker processes (engine/partitioned/search.py).
    `run.engine_choice` says which ran and, where the default fell back, why."""
    from functools import partial

    from protocol.engine.partitioned.search import explore_parallel
    from protocol.engine.vector.explore import explore_vector

    factory = partial(model_for, named.config)
    model = factory()
    return choose_engine(model, engine, lambda: explore_vector(model, workers=workers, **options),
                         lambda: explore_parallel(factory, workers, pool=None, **options))


def explore_partitioned(named: NamedConfig, workers: int, cluster: str | None, engine: str | None = None,
                        **options) -> Run:
    """The states partitioned over worker processes or Ray actors: the vector engine's
    partitions (engine/vector_partition.py) where they apply, else the packed engine's
    (engine/parallel.py); `engine` names one. `run.engine_choice` says which ran and,
    where the default fell back, why."""
    from functools import partial

    from protocol.engine.partitioned.search import explore_parallel
    from protocol.engine.vector.partition import VectorPartition, explore_vector_parallel

    factory = partial(model_for, named.config)

    def vector() -> Run:
        pool = partition_pool(cluster, factory, workers, options["record_edges"], VectorPartition)
        return explore_vector_parallel(factory, workers, pool=pool, **options)

    def packed() -> Run:
        return explore_parallel(factory, workers, pool=partition_pool(cluster, factory, workers,
                                                                      options["record_edges"]), **options)

    return choose_engine(factory(), engine, vector, packed)


def partition_pool(cluster: str | None, factory, workers: int, record_edges: bool, kind=None):
    """Ray actors at `cluster` to hold the partitions (built by `kind`), or None: forked workers."""
    if cluster is None:
        return None
    from protocol.engine.partitioned.cluster import ClusterUnavailable, RayPool

    try:
        return RayPool(cluster, factory, workers, record_edges, kind)
    except ClusterUnavailable as why:
        raise ConfigError(str(why)) from None


def refuse_liveness_with_fingerprints(named: NamedConfig, liveness: bool) -> None:
    """Fingerprints keep no graph to decide liveness on: refuse to be asked for it,
    or to check a configuration whose expected verdict is a liveness one."""
    if liveness:
        raise ConfigError("--fingerprints checks safety only; add --no-liveness")
    if expected_liveness(named):
        raise ConfigError(f"{named.name} must violate {expected_liveness(named)[0]}, a liveness property, "
                          "and --fingerprints checks safety only: drop --fingerprints")


def expected_liveness(named: NamedConfig) -> list[str]:
    """The liveness properties `named` must violate (a run without liveness leaves them unchecked)."""
    return [name for name in named.expected_violations() if name in props.names_for(named.config, props.LIVENESS)]


def safety_verdict(run: Run, name: str) -> Verdict:
    path = run.counterexample(name)
    if path is not None:
        return Verdict(False, trace_from_path(name, path))
    return Verdict(True if run.complete else None)


def reached_depths(run: Run, named: NamedConfig) -> dict | None:
    """Per state predicate the configuration expects to be reachable, the depth where it
    was first reached (None: not reached); None when the run keeps no states."""
    predicates = reachable.predicates_for(named.reachable, named.config)
    if not predicates:
        return {}
    try:
        return run.first_reached(predicates)
    except Unavailable:
        return None


# ------------------------------------------------------------------ liveness


def liveness_verdicts(run: Run, model: Model, cfg=None) -> dict:
    """Each liveness property's verdict, decided by the run (`Run.decide_liveness`) on its
    graph under the model's fairness, with a lasso as a narrated Trace (its disabled fair
    actions each with the reason `cfg`'s actions declare)."""
    verdicts = {}
    for name, decided in run.decide_liveness(model).items():
        trace = None if decided.lasso is None else lasso_trace(name, decided.lasso, cfg)
        verdicts[name] = Verdict(decided.holds, trace, vacuous=decided.vacuous, premises=decided.premises)
    return verdicts


def lasso_trace(name: str, lasso: LassoRun, cfg=None) -> Trace:
    """The lasso as a Trace, with notes saying which leads-to fails and why the cycle is fair:
    each fair action disabled in the cycle with the guard or bound that keeps it so, where
    `cfg` is given and the action declares one (`Action.why_disabled`)."""
    steps, pair = lasso.steps, lasso.pair
    notes = [f"{pair.text} fails: {stall_start(steps, pair)} on, the premise has held "
             "and the conclusion never holds"]
    stutters = lasso.back is None
    if stutters:
        notes.append(f"stutters forever in state {lasso.loop + 1}")
    else:
        notes.append(f"back to state {lasso.loop + 1} by {lasso.back}")
    if not lasso.any_fair:
        notes.append("no action is fair (fairness off): the behaviour may stop anywhere")
    for family, how, where in lasso.fairness:
        if how == "disabled":
            why = why_disabled(Label(*family), steps[where][1], cfg) if cfg is not None else None
            notes.append(f"{Label(*family)} is disabled in state {where + 1}" + (f": {why}" if why else ""))
        else:
            notes.append(f"{Label(*family)} is taken in the cycle, from state {where + 1}")
    return trace_from_path(name, steps, loop=lasso.loop, stutters=stutters, notes=tuple(notes))


def why_disabled(label: Label, state, cfg) -> str | None:
    """What keeps the fair action instance `label` disabled in `state`, as its action declares."""
    from protocol.model.actions import BY_NAME

    action = BY_NAME.get(label.name)
    if action is None or action.why_disabled is None:
        return None
    keywords = next((given for arguments, given in action.parameters(cfg) if tuple(arguments) == label.args), None)
    return None if keywords is None else action.why_disabled(state, cfg, **keywords)


def stall_start(steps, pair) -> str:
    """Where the lasso's stall starts: the first state from which the conclusion never
    holds again, once the premise has held."""
    start = len(steps) - 1
    while start > 0 and not pair.conclusion(steps[start - 1][1]):
        start -= 1
    while not pair.premise(steps[start][1]):
        start += 1
    return f"from state {start + 1}"
