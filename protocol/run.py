"""Checking a named configuration: explore it, give every property a verdict,
and compare the verdicts with what the configuration expects.
"""

from __future__ import annotations

import time

from typing import Callable

import attrs

import invariants

from .config import ConfigError, NamedConfig
from .engine import Label, Model, Refusal, pair_permutation
from .engine.checker import Exploration, Progress
from .engine.fast import explore_model, leads_to_masks as leads_to_masks_by_component, unreduced_counts
from .engine.liveness import FairGraph, QuotientCycle, Symmetry, find_violation, find_violation_reduced, leads_to_masks
from .model import model_for
from .trace import Trace, trace_from_path


ENGINES = ("packed", "vector")


def explore_config(cfg, engine: str | None = None, **options):
    """Explore configuration `cfg` with the vector engine where it applies
    (`engine.vector.explore_vector`), else with the packed one
    (`engine.fast.explore_model`); `engine` names one. `run.engine_choice` says
    which ran and, where the default fell back, why."""
    from .engine.vector import WideKeys, explore_vector, vector_refusal

    model = model_for(cfg)
    why = vector_refusal(model, **{flag: options.get(flag, False) for flag in ("symmetry", "fingerprints")})
    if engine == "vector" and why is not None:
        raise ConfigError(f"--engine vector cannot check this: {why}; drop --engine vector")
    run = None
    if engine != "packed" and why is None:
        try:
            run = explore_vector(model, **options)
        except WideKeys as wide:
            if engine == "vector":
                raise ConfigError(f"--engine vector cannot check this: {wide}; drop --engine vector") from None
            why = str(wide)
    if run is None:
        try:
            run = explore_model(model, **options)
        except Refusal as refusal:
            raise ConfigError(str(refusal)) from None
        run.engine_choice = {"name": "packed", **({"why": why} if engine != "packed" else {})}
    else:
        run.engine_choice = {"name": "vector"}
    run.model = model
    return run


@attrs.frozen
class Verdict:
    """A property's verdict: True holds, False violated, None unknown (search cut short)."""

    holds: bool | None
    trace: Trace | None = None

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
    # "graph_gathered": whether liveness needed the whole graph on the coordinator}.
    parallel: dict | None = None
    # Which sequential engine ran: {"name": "vector"} or {"name": "packed", "why": ...}
    # ("why" only where the default vector engine did not apply); None with workers.
    engine: dict | None = None
    # The vector engine's CPU seconds per part of the search and of liveness (for `bench`).
    parts: dict | None = None

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
        return found

    @property
    def as_expected(self) -> bool:
        return not self.mismatches()


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
) -> CheckResult:
    """Explore `named` breadth-first and give each property its verdict.

    With `liveness` the explored graph's edges are kept and the liveness
    properties are decided on it after the safety ones; without, they are
    left out. With `symmetry` both are decided on one state per orbit.
    With `workers` > 1 (or a Ray `cluster` address) the states are
    partitioned over that many workers (engine/parallel.py); one worker is
    the sequential search, untouched. `engine` chooses the sequential engine
    ("packed" or "vector"); by default the vector one where it applies.
    """
    cfg = named.config
    started = time.perf_counter()
    if fingerprints:
        refuse_liveness_with_fingerprints(named, liveness)
    if workers > 1 or cluster is not None:
        return check_parallel(named, workers, cluster, max_states=max_states, stop_on_violation=stop_on_violation,
                              on_progress=on_progress, liveness=liveness, started=started, engine=engine)
    run = explore_config(  # the fast engines: same states, order, edges and verdicts
        cfg,
        engine=engine,
        symmetry=symmetry,
        fingerprints=fingerprints,
        max_states=max_states,
        stop_on_violation=stop_on_violation,
        on_progress=on_progress,
        record_edges=liveness,
    )
    model = run.model
    verdicts = {name: safety_verdict(run, name) for name in [*model.invariants, *model.transition_properties]}
    interrupted = run.interrupted
    if liveness and not fingerprints:  # not asked for (or no graph kept): no verdict to report
        try:
            verdicts.update(liveness_verdicts(run, model))
        except KeyboardInterrupt:  # Ctrl-C while deciding liveness: the safety verdicts stand
            verdicts.update({name: Verdict(None) for name in model.liveness})
            interrupted = True
    return CheckResult(
        named=named,
        **unreduced_counts(run),
        depth=run.depth,
        seconds=time.perf_counter() - started,  # the search and the liveness decision
        complete=run.complete,
        interrupted=interrupted,
        properties=verdicts,
        stopped_on_violation=stop_on_violation and bool(run.violations),
        fingerprint_collision=run.collision_probability() if fingerprints else None,
        engine=run.engine_choice,
        parts=getattr(run, "parts", None),
    )


PARTITIONED = {"name": "packed", "why": "the partitioned search (--workers, --cluster) runs the packed engine"}


def check_parallel(named: NamedConfig, workers: int, cluster: str | None, *, liveness: bool, started: float,
                   engine: str | None = None, **options) -> CheckResult:
    """`check` with the states partitioned over worker processes or Ray actors."""
    from functools import partial

    from .engine.parallel import explore_parallel

    factory = partial(model_for, named.config)
    pool = None
    if cluster is not None:
        from .engine.cluster import ClusterUnavailable, RayPool

        try:
            pool = RayPool(cluster, factory, workers, liveness)
        except ClusterUnavailable as why:
            raise ConfigError(str(why)) from None
    run = explore_parallel(factory, workers, record_edges=liveness, pool=pool, **options)
    model = model_for(named.config)
    if run.interrupted:  # the workers are stopped: no trace to fetch, no verdict
        verdicts = {name: Verdict(None) for name in [*model.invariants, *model.transition_properties,
                                                     *(model.liveness if liveness else ())]}
        return CheckResult(named=named, distinct_states=run.distinct_states, transitions=run.transitions,
                           depth=run.depth, seconds=time.perf_counter() - started, complete=False,
                           interrupted=True, properties=verdicts, engine=PARTITIONED)
    try:
        verdicts = {name: safety_verdict(run, name) for name in [*model.invariants, *model.transition_properties]}
        interrupted = run.interrupted
        if liveness:
            try:
                verdicts.update(liveness_verdicts(run, model))
            except KeyboardInterrupt:
                verdicts.update({name: Verdict(None) for name in model.liveness})
                interrupted = True
        if not interrupted:  # the workers' peaks once liveness, decided in them or not, is done too
            run.worker_memory = run.pool.call("memory", [()] * workers)
    finally:
        run.pool.close()
    return CheckResult(
        named=named, distinct_states=run.distinct_states, transitions=run.transitions, depth=run.depth,
        seconds=time.perf_counter() - started, complete=run.complete, interrupted=interrupted,
        properties=verdicts, stopped_on_violation=options.get("stop_on_violation", False) and bool(run.violations),
        parallel={"workers": workers, "bytes_exchanged": run.bytes_exchanged, "worker_peak_bytes": run.worker_memory,
                  "level_sizes": run.level_sizes, "graph_gathered": run.gathered},
        engine=PARTITIONED,
    )


def refuse_liveness_with_fingerprints(named: NamedConfig, liveness: bool) -> None:
    """Fingerprints keep no graph to decide liveness on: refuse to be asked for it,
    or to check a configuration whose expected verdict is a liveness one."""
    if liveness:
        raise ConfigError("--fingerprints checks safety only; add --no-liveness")
    liveness_expected = [name for name in named.expected_violations() if name in invariants.LIVENESS_PROPERTIES]
    if liveness_expected:
        raise ConfigError(f"{named.name} must violate {liveness_expected[0]}, a liveness property, "
                          "and --fingerprints checks safety only: drop --fingerprints")


def safety_verdict(run: Exploration, name: str) -> Verdict:
    path = run.counterexample(name)
    if path is not None:
        return Verdict(False, trace_from_path(name, path))
    return Verdict(True if run.complete else None)


# ------------------------------------------------------------------ liveness


def liveness_verdicts(run: Exploration, model: Model) -> dict:
    """Each liveness property's verdict, decided on the recorded graph under the model's fairness.

    Unknown when the graph is incomplete or its edges were not recorded: a
    state not expanded might still have a way out of a stall. A partitioned
    search first tries to decide where its edges lie (`liveness_holds`); the
    graph is gathered only for a property that might fail there.
    """
    if not (run.complete and run.edges_recorded):
        return {name: Verdict(None) for name in model.liveness}
    verdicts, graph, initial = {}, None, None
    for name, pairs in model.liveness.items():
        if holds_in_place(run, name):
            verdicts[name] = Verdict(True)
            continue
        if graph is None:
            graph, initial = decision_graph(run, model)
        masks = pair_masks(run, pairs, name)
        if getattr(run, "reduction", None) is None:
            search = getattr(graph, "find_violation", None)  # the vector engine's graph decides itself
            found = search(initial, masks) if search is not None else find_violation(graph, initial, masks)
        else:
            found = violation_reduced(run, graph, initial, masks, name, pairs)
        if found is None:
            verdicts[name] = Verdict(True)
        else:
            verdicts[name] = Verdict(False, lasso_trace(run, graph, name, pairs[found.pair], found.lasso))
    return verdicts


def holds_in_place(run: Exploration, name: str) -> bool:
    """Whether a partitioned search decided, without gathering its graph, that property
    `name` holds (engine/parallel.py: `liveness_holds`). False for any other search."""
    if not hasattr(run, "liveness_holds"):
        return False
    return run.liveness_holds(pairs_in_partition(name))


def pairs_in_partition(name: str):
    """What a partition calls on its own model for property `name`'s leads-to pairs."""
    from functools import partial

    from .engine.parallel import liveness_pairs

    return partial(liveness_pairs, name)


def decision_graph(run: Exploration, model: Model) -> tuple[FairGraph, list[int]]:
    """The fair graph the liveness properties are decided on, and its initial states
    (a partitioned search gathers its edges first)."""
    if hasattr(run, "fair_graph"):  # the vector engine's graph, in arrays
        return run.fair_graph(model), run.initial_ids()
    if hasattr(run, "gather_edges"):
        run.gather_edges()
        return fair_graph(run, model), run.initial_ids()
    return fair_graph(run, model), [state_id for state_id, parent in enumerate(run.parent) if parent < 0]


def pair_masks(run: Exploration, pairs, name: str) -> list:
    """liveness.leads_to_masks over the stored states: per interned component with the
    packed engine (by each partition, when partitioned), else on every decoded state."""
    if hasattr(run, "pair_masks"):
        return run.pair_masks(pairs_in_partition(name))
    if getattr(run, "engine", None) is not None:
        return leads_to_masks_by_component(run.engine, run.states, pairs)
    states = (run.state(state_id) for state_id in range(run.distinct_states))
    return leads_to_masks(states, [(pair.premise, pair.conclusion) for pair in pairs])


def violation_reduced(run: Exploration, graph, initial, masks, name: str, pairs):
    """find_violation_reduced on a search reduced by symmetry: every edge's label id
    carries its permutation, which renames the pairs' processes."""
    perms = run.reduction.permutations
    try:
        pair_maps = [pair_permutation(pairs, rename) for rename in perms.renames]
    except ValueError as error:  # the pairs do not permute with the processes
        raise ConfigError(f"{name} under --symmetry: {error}; drop --symmetry") from None
    symmetry = Symmetry([perms.split(label)[1] for label in range(len(run.labels))], pair_maps)
    try:
        return find_violation_reduced(graph, initial, masks, symmetry)
    except QuotientCycle:
        raise ConfigError(f"{name} under --symmetry: a stall may go round a cycle of the reduced graph, "
                          "where one state per orbit cannot judge fairness; drop --symmetry") from None


def fair_graph(run: Exploration, model: Model) -> FairGraph:
    """The recorded graph with its weakly fair families (none where nothing is fair)."""
    family_of = {instance.label: instance.family for instance in model.instances}
    label_family = [family_of.get(label) for label in run.labels]
    return FairGraph(
        run.distinct_states, run.edge_src, run.edge_label, run.edge_dst, model.fair_families, label_family,
        enabled=getattr(run, "enabled", None),  # a partitioned search gathers them with the edges
    )


def lasso_trace(run: Exploration, graph, name: str, pair, lasso) -> Trace:
    """The lasso as a Trace, with notes saying which leads-to fails and why the cycle is fair.
    Under symmetry the lasso of representatives is realised as the real run it stands for."""
    realize = getattr(run, "realize_lasso", None)
    if realize is not None:
        steps, _ = realize([(label, run.states[state_id]) for label, state_id in lasso.steps])
    else:
        steps = [
            (None if label is None else run.labels[label], run.state(state_id))
            for label, state_id in lasso.steps
        ]
    notes = [f"{pair.text} fails: {stall_start(steps, pair)} on, the premise has held "
             "and the conclusion never holds"]
    if lasso.stutters:
        notes.append(f"stutters forever in state {lasso.loop + 1}")
    else:
        notes.append(f"back to state {lasso.loop + 1} by {run.labels[lasso.back]}")
    if not graph.families:
        notes.append("no action is fair (fairness off): the behaviour may stop anywhere")
    for family, how, where in lasso.fairness:
        if how == "disabled":
            notes.append(f"{Label(*family)} is disabled in state {where + 1}")
        else:
            notes.append(f"{Label(*family)} is taken in the cycle, from state {where + 1}")
    return trace_from_path(name, steps, loop=lasso.loop, stutters=lasso.stutters, notes=tuple(notes))


def stall_start(steps, pair) -> str:
    """Where the lasso's stall starts: the first state from which the conclusion never
    holds again, once the premise has held."""
    start = len(steps) - 1
    while start > 0 and not pair.conclusion(steps[start - 1][1]):
        start -= 1
    while not pair.premise(steps[start][1]):
        start += 1
    return f"from state {start + 1}"
