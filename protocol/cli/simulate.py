"""`protocol simulate NAME`: random walks (TLC's -simulate), every safety property
checked at every step. A walk can refute a property, never prove it."""

from __future__ import annotations

import json

from protocol.configurations.named import lookup
from protocol.model.next import instance_count
from protocol.tools.simulate import SimulationResult, simulate
from protocol.cli.check import refuse_unchecked_expectation
from protocol.cli.common import (
    DEPTH_LIMIT, SEED_LIMIT, WALKS_LIMIT, UsageError, add_constants_option, constants_from, make_console,
    add_workers_option, output_to, settle, whole_number, RunFailure,
)

# Each step of a walk evaluates the guard of every action instance (about a
# microsecond each, measured); past this many evaluations a run takes minutes.
GUARD_BUDGET = 20_000_000


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help,
        description="Random walks from the initial state (TLC's -simulate): each step takes one "
                    "enabled action at random and every safety property is checked. A walk can "
                    "find a violation, never prove that a property holds.",
    )
    parser.add_argument("name", metavar="NAME", help="a configuration name (see `list`)")
    add_constants_option(parser)
    parser.add_argument("--walks", type=whole_number(1, WALKS_LIMIT), default=1000, metavar="N",
                        help="walks to run (default 1000)")
    parser.add_argument("--depth", type=whole_number(1, DEPTH_LIMIT, "a walk keeps every state it visits"),
                        default=100, metavar="K",
                        help="at most K states per walk, the initial state included (default 100)")
    parser.add_argument("--seed", type=whole_number(0, SEED_LIMIT), default=0, metavar="S",
                        help="random seed; the same seed gives the same walks (default 0)")
    add_workers_option(parser, "run the walks in N processes (SPIN's swarm; auto: one per core): walk k "
                               "from its own seed, so the result is the same for every N >= 2")
    parser.add_argument("--json", action="store_true", help="print one JSON object (one line)")
    parser.add_argument("--full", action="store_true", help="show every variable of every trace state")
    parser.set_defaults(run=run)


def refuse_unfinishable(named, walks: int, depth: int) -> None:
    """Refuse a simulation whose guard evaluations would take far longer than a run should."""
    per_step = instance_count(named.config)
    work = walks * (depth - 1) * per_step
    if work > GUARD_BUDGET:
        raise UsageError(
            f"{walks:,} walks of {depth:,} states over {per_step:,} action instances evaluate up to "
            f"{work:,} guards, more than the {GUARD_BUDGET:,} a run finishes in about a minute: "
            "lower --walks, --depth or the constants")


def run(args) -> int:
    if args.json and args.full:
        raise UsageError("--full applies to the terminal traces, not to --json: drop one")
    named = lookup(args.name).with_constants(constants_from(args))
    refuse_unchecked_expectation(named, "simulate", "random walks check safety only; use `check`")
    refuse_unfinishable(named, args.walks, args.depth)
    options = dict(walks=args.walks, depth=args.depth, seed=args.seed)
    with output_to(None) as sink:
        console = make_console(sink)
        if args.workers > 1:
            from protocol.engine.partitioned.search import WorkerLost
            from protocol.tools.simulate import simulate_swarm

            try:
                result = simulate_swarm(named, workers=args.workers, **options)
            except WorkerLost as lost:
                raise RunFailure(str(lost)) from None
        elif console.is_terminal and not args.json:
            from protocol.render.simulate import walk_progress_bar

            with walk_progress_bar(console, named.name, args.walks) as on_progress:
                result = simulate(named, on_progress=on_progress, **options)
        else:
            result = simulate(named, **options)
        if args.json:
            print(walks_json_line(result), file=sink, flush=True)
        else:
            from protocol.render.simulate import render_simulation

            render_simulation(console, result, full=args.full)
        return settle(sink, complete=result.complete, as_expected=result.as_expected,
                      interrupted=not result.complete,
                      why=f"{result.walks_run:,} of {result.walks:,} walks run")


def walks_json_line(result: SimulationResult) -> str:
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
