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

import argparse
import json
import random
import time
from typing import Callable, Mapping, NamedTuple, Sequence

import attrs

from .config import NamedConfig
from .model import Model, model_for
from .trace import Step, Trace

# choose(options) -> index into options, the enabled (label, next state) pairs.
Chooser = Callable[[Sequence[tuple]], int]


class Checks(NamedTuple):
    """The properties a walk checks, bound to its configuration."""

    state: Mapping[str, Callable]  # name -> (state) -> bool
    transition: Mapping[str, Callable]  # name -> (before, after) -> bool

    def broken_by_state(self, state) -> tuple[str, ...]:
        return tuple(name for name, holds in self.state.items() if not holds(state))

    def broken_by_step(self, before, after) -> tuple[str, ...]:
        broken = tuple(name for name, holds in self.transition.items() if not holds(before, after))
        return broken + self.broken_by_state(after)


def checks_for(cfg) -> Checks:
    """Every safety property of the spec (invariants/), bound to `cfg`."""
    from .run import safety_properties

    return Checks(*safety_properties(cfg))


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


def walk(model: Model, checks: Checks, choose: Chooser, depth: int) -> Walk:
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


def ordered(findings: dict, checks: Checks) -> dict:
    names = list(checks.state) + list(checks.transition)
    return {name: findings[name] for name in names if name in findings}


# ---------------------------------------------------------------- the CLI


def add_simulate_parser(subparsers) -> None:
    from .cli import add_constants_option, at_least_one

    parser = subparsers.add_parser(
        "simulate", help="random walks over the model, checking every property at every step",
        description="Random walks from the initial state (TLC's -simulate): each step takes one "
                    "enabled action at random and every safety property is checked. A walk can "
                    "find a violation, never prove that a property holds.",
    )
    parser.add_argument("name", metavar="NAME", help="a configuration name (see `list`)")
    add_constants_option(parser)
    parser.add_argument("--walks", type=at_least_one, default=1000, metavar="N",
                        help="walks to run (default 1000)")
    parser.add_argument("--depth", type=at_least_one, default=100, metavar="K",
                        help="at most K states per walk, the initial state included (default 100)")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="random seed; the same seed gives the same walks (default 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (one line)")
    parser.add_argument("--full", action="store_true", help="show every variable of every trace state")
    parser.set_defaults(run=run_simulate)


def run_simulate(args: argparse.Namespace) -> int:
    from .cli import (
        EXIT_AS_EXPECTED, EXIT_NOT_AS_EXPECTED, constants_from, make_console, refuse_unchecked_expectation,
    )
    from .config import lookup

    named = lookup(args.name).with_constants(constants_from(args))
    refuse_unchecked_expectation(named, "simulate", "random walks check safety only; use `check`")
    console = make_console()
    options = dict(walks=args.walks, depth=args.depth, seed=args.seed)
    from .render_simulate import render_simulation, walk_progress_bar

    if console.is_terminal and not args.json:
        with walk_progress_bar(console, named.name, args.walks) as on_progress:
            result = simulate(named, on_progress=on_progress, **options)
    else:
        result = simulate(named, **options)
    if args.json:
        print(json_line(result), flush=True)
    else:
        render_simulation(console, result, full=args.full)
    return EXIT_AS_EXPECTED if result.as_expected else EXIT_NOT_AS_EXPECTED


def json_line(result: SimulationResult) -> str:
    """One JSON record; `holds` is false for a violated property and null otherwise
    (random walks never prove that a property holds)."""
    properties = {}
    for name in result.properties:
        finding = result.findings.get(name)
        properties[name] = {
            "holds": False if finding else None,
            "trace_length": finding.trace.length if finding else None,
            "first_walk": finding.first_walk if finding else None,
        }
    return json.dumps({
        "config": result.named.name,
        "constants": result.config.constants,
        "switches": result.config.switches,
        "walks": result.walks_run,
        "depth": result.depth,
        "seed": result.seed,
        "steps": result.steps,
        "distinct_states": result.distinct_states,
        "seconds": round(result.seconds, 3),
        "complete": result.complete,
        "properties": properties,
        "as_expected": result.as_expected,
    })
