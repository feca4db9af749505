"""Random simulation: walks over the checker's own successor function (TLC's `-simulate`).

Exhaustive search stops at small constants; random walks reach wider ones.
A walk starts in the initial state and, at each step, takes one enabled
action instance picked by a `choose` function, checking every state
invariant on every state and every transition property on every step. It
ends at its first violation, where nothing is enabled, or after `depth`
states. `simulate` draws its choices from one `random.Random(seed)`, so the
same seed gives the same walks; the Hypothesis tests pass their own `choose`
(a draw per step), so fuzzing and simulation run the very same transitions
as the checker. A walk can refute a property, never prove it: a property no
walk violated is reported as "not violated", never as "holds".
"""

from __future__ import annotations

import random
import time
from typing import Callable, Mapping, NamedTuple, Sequence

import attrs

from protocol.configurations.named import NamedConfig
from protocol.model.next import Model, model_for
from protocol.model.trace import Step, Trace

# choose(options) -> index into options, the enabled (label, next state) pairs.
Chooser = Callable[[Sequence[tuple]], int]


class WalkChecks(NamedTuple):
    """The properties a walk checks, bound to its configuration."""

    state: Mapping[str, Callable]  # name -> (state) -> bool
    transition: Mapping[str, Callable]  # name -> (before, after) -> bool

    def broken_by_state(self, state) -> tuple[str, ...]:
        return tuple(name for name, holds in self.state.items() if not holds(state))

    def broken_by_step(self, before, after) -> tuple[str, ...]:
        broken = tuple(name for name, holds in self.transition.items() if not holds(before, after))
        return broken + self.broken_by_state(after)


def checks_for(cfg) -> WalkChecks:
    """Every safety property of the spec (protocol/properties/), bound to `cfg`."""
    from protocol.run import safety_properties

    return WalkChecks(*safety_properties(cfg))


class Walk(NamedTuple):
    """One random run: its steps, and the properties its last step violated (if any)."""

    steps: tuple  # of Step, the initial state first
    violated: tuple  # property names; empty when the walk found nothing

    @property
    def length(self) -> int:
        """States in the walk, the initial state included (as a trace is counted)."""
        return len(self.steps)

    def trace(self, prop: str) -> Trace:
        return Trace(prop, self.steps)


def walk(model: Model, checks: WalkChecks, choose: Chooser, depth: int) -> Walk:
    """Walk from the initial state until a violation, a deadlock or `depth` states."""
    state = model.initial_states[0]
    steps = [Step(None, state)]
    violated = checks.broken_by_state(state)
    while not violated and len(steps) < depth:
        options = model.successors(state)
        if not options:
            break  # nothing enabled: the run stutters forever, nothing more to see
        label, after = options[choose(options)]
        violated = checks.broken_by_step(state, after)
        steps.append(Step(label, after))
        state = after
    return Walk(tuple(steps), violated)


# -------------------------------------------------------------- simulation


@attrs.frozen
class Finding:
    """A property some walk violated: the shortest such walk, and how often it happened."""

    trace: Trace
    first_walk: int  # the 1-based number of the first walk that violated it
    walks: int  # how many walks violated it


@attrs.frozen
class SimulationResult:
    named: NamedConfig
    walks: int  # walks asked for
    walks_run: int
    depth: int
    seed: int
    steps: int  # transitions taken over all walks
    distinct_states: int  # distinct states visited over all walks
    seconds: float
    findings: dict  # property name -> Finding, for the violated properties
    properties: tuple  # every property checked, in the spec's order

    @property
    def config(self):
        return self.named.config

    @property
    def complete(self) -> bool:
        return self.walks_run == self.walks

    def mismatches(self) -> list[str]:
        """Why the findings differ from what the configuration expects; empty if as expected."""
        expected = self.named.expected_violations()
        found = [f"{name} was expected to be violated, but no walk of {self.walks_run} violated it"
                 for name in expected if name not in self.findings]
        found += [f"{name} violated unexpectedly" for name in self.findings if name not in expected]
        if not self.complete:
            found.append(f"interrupted after {self.walks_run} of {self.walks} walks")
        return found

    @property
    def as_expected(self) -> bool:
        return not self.mismatches()


class WalkProgress(NamedTuple):
    walks_done: int
    walks: int
    violations: int  # walks that ended in a violation so far


def simulate(
    named: NamedConfig,
    *,
    walks: int,
    depth: int,
    seed: int,
    on_progress: Callable[[WalkProgress], None] | None = None,
) -> SimulationResult:
    """Run `walks` random walks of at most `depth` states, choices drawn from `seed`."""
    cfg = named.config
    model, checks = model_for(cfg), checks_for(cfg)
    rng = random.Random(seed)  # never the global RNG: the same seed gives the same walks

    def choose(options) -> int:
        return rng.randrange(len(options))

    started = time.perf_counter()
    findings: dict[str, Finding] = {}
    seen: set = set()
    steps = done = violating = 0
    try:
        for number in range(1, walks + 1):
            run = walk(model, checks, choose, depth)
            done, steps = number, steps + run.length - 1
            seen.update(step.state for step in run.steps)
            violating += bool(run.violated)
            for prop in run.violated:
                findings[prop] = better_finding(findings.get(prop), run, prop, number)
            if on_progress is not None:
                on_progress(WalkProgress(done, walks, violating))
    except KeyboardInterrupt:
        pass  # report what was walked; the result is incomplete
    return SimulationResult(
        named=named, walks=walks, walks_run=done, depth=depth, seed=seed, steps=steps,
        distinct_states=len(seen), seconds=time.perf_counter() - started,
        findings=ordered(findings, checks), properties=tuple(checks.state) + tuple(checks.transition),
    )


def better_finding(old: Finding | None, run: Walk, prop: str, number: int) -> Finding:
    """Keep the shortest violating walk (the earliest among equals), and count them all."""
    if old is None:
        return Finding(run.trace(prop), number, 1)
    shortest = run.trace(prop) if run.length < old.trace.length else old.trace
    return Finding(shortest, old.first_walk, old.walks + 1)


def ordered(findings: dict, checks: WalkChecks) -> dict:
    names = list(checks.state) + list(checks.transition)
    return {name: findings[name] for name in names if name in findings}


# -------------------------------------------------------------- swarm (SPIN's)


def walk_seed(seed: int, number: int) -> int:
    """The seed of walk `number` in a swarm: its own, so the walk is the same whichever
    worker runs it and however many there are."""
    return seed * 1_000_003 + number


def swarm_share(cfg, walks: int, depth: int, seed: int, first: int, stride: int) -> tuple:
    """Walks first, first + stride, ... (1-based) of a swarm, each from its own seed: the
    shortest violating walk per property (the earliest among equals) with its number and
    how many walks violated it, the steps taken, and the fingerprints of the states seen."""
    from array import array

    from protocol.engine.partitioned.search import fingerprint

    model, checks = model_for(cfg), checks_for(cfg)
    best: dict = {}  # prop -> [length, number, steps, walks violating]
    seen: set = set()
    steps = 0
    for number in range(first, walks + 1, stride):
        rng = random.Random(walk_seed(seed, number))
        run = walk(model, checks, lambda options: rng.randrange(len(options)), depth)
        steps += run.length - 1
        seen.update(step.state for step in run.steps)
        for prop in run.violated:
            entry = best.get(prop)
            if entry is None:
                best[prop] = [run.length, number, run.steps, 1, number]  # ..., the first walk
            else:
                entry[3] += 1
                if (run.length, number) < (entry[0], entry[1]):
                    entry[:3] = [run.length, number, run.steps]
    return best, steps, array("Q", map(fingerprint, seen)).tobytes()


def simulate_swarm(named: NamedConfig, *, walks: int, depth: int, seed: int, workers: int) -> SimulationResult:
    """`simulate` as SPIN's swarm: `workers` processes run independent seeded walks
    (walk k from its own seed, `walk_seed`), merged deterministically: the result does
    not depend on the number of workers. Distinct states are counted by 64-bit
    fingerprint of each state's canonical bytes."""
    import multiprocessing
    from array import array
    from concurrent.futures.process import BrokenProcessPool

    from protocol.engine.partitioned.search import WorkerLost
    from protocol.lifecycle import deferred, process_pool

    cfg = named.config
    started = time.perf_counter()
    shares = []
    with process_pool(workers, multiprocessing.get_context("fork")) as pool:
        with deferred():  # the workers start whole, or an interrupt would find them half started
            futures = [pool.submit(swarm_share, cfg, walks, depth, seed, first, workers)
                       for first in range(1, workers + 1)]
        for index, future in enumerate(futures):
            try:
                shares.append(future.result())
            except BrokenProcessPool:
                raise WorkerLost(f"a swarm worker died (share {index} of {workers}): "
                                 "the simulation has no result") from None
    findings, seen, steps = {}, set(), 0
    for best, share_steps, fingerprints in shares:
        steps += share_steps
        seen.update(array("Q", fingerprints))
        for prop, (length, number, walk_steps, count, first_walk) in best.items():
            merged = findings.get(prop)
            if merged is None:
                findings[prop] = [length, number, walk_steps, count, first_walk]
            else:
                merged[3] += count
                merged[4] = min(merged[4], first_walk)
                if (length, number) < (merged[0], merged[1]):
                    merged[:3] = [length, number, walk_steps]
    checks = checks_for(cfg)
    found = {prop: Finding(Trace(prop, walk_steps), first_walk, count)
             for prop, (_, _, walk_steps, count, first_walk) in findings.items()}
    return SimulationResult(
        named=named, walks=walks, walks_run=walks, depth=depth, seed=seed, steps=steps,
        distinct_states=len(seen), seconds=time.perf_counter() - started,
        findings=ordered(found, checks), properties=tuple(checks.state) + tuple(checks.transition),
    )
