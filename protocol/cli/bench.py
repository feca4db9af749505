"""`protocol bench`: measure the search on a ladder of constants. One line per
measurement as it is taken (JSON Lines with --json), then the table; Ctrl-C
keeps what was measured."""

from __future__ import annotations

import argparse
import json

from protocol.tools.bench import (
    ALL_CONSTANTS, ALL_MAX_STATES, ALL_MODES, CONFIGURATIONS, DEFAULT_MAX_STATES, LADDER, MODES, SCC_MODES, WIDENINGS,
    ladder, machine,
)
from protocol.model.config import Config, parse_constant
from protocol.configurations.named import lookup
from protocol.cli.common import (
    MAX_STATES_LIMIT, UsageError, add_constants_option, constants_from, output_to, settle, whole_number,
    wide_console,
)

PIPE_WIDTH = 200
MAX_REPEAT = 20  # --repeat: more runs than this of one measurement say no more


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help,
        description="For each rung of constants and for Holds and HoldsAcquire: distinct states, "
                    "transitions, seconds for safety, for safety and liveness, and for both under "
                    "symmetry; distinct states per second; peak memory. Each run in a fresh process.",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per measurement, as taken")
    add_constants_option(parser)
    parser.add_argument("--rung", action="append", default=[], metavar="P=2,D=2,MaxTime=2",
                        help="measure these constants instead of the default ladder; repeatable "
                             "(-c NAME=VALUE gives a single rung)")
    parser.add_argument("--config", action="append", default=[], metavar="NAME",
                        help=f"configurations to measure (default: {', '.join(CONFIGURATIONS)})")
    parser.add_argument("--scc", action="store_true",
                        help="also time splitting each whole graph into strongly connected components, "
                             "by our Tarjan and by networkx (with their peak memory)")
    parser.add_argument("--max-states", type=whole_number(1, MAX_STATES_LIMIT, "what fits in memory"),
                        default=None, metavar="N",
                        help="a rung past N distinct states does not fit and is skipped "
                             f"(default {DEFAULT_MAX_STATES:,})")
    parser.add_argument("--workers", metavar="1,2", type=worker_counts,
                        help="measure with each of these worker counts side by side (wall and CPU seconds, "
                             "the wall ratio to one worker, states/s per worker, bytes exchanged per state, "
                             "the load): by default Holds at P=2, D=2, MaxTime=3 for safety and HoldsSealAlias "
                             "at P=2 with liveness; with --config, --rung or -c, safety and safety+liveness "
                             "of those; first, the machine's own ceiling (numpy sorts on as many threads "
                             "against one after the other)")
    parser.add_argument("--repeat", type=whole_number(1, MAX_REPEAT, "a few runs"), default=1, metavar="N",
                        help="take each measurement N times, each in a fresh process, and show the one of least "
                             "wall seconds (a shared machine's wall seconds vary by a quarter between runs; "
                             "not with --validate, which repeats its short runs itself)")
    parser.add_argument("--engines", action="store_true",
                        help="measure safety and safety+liveness with the packed and the vector engine side "
                             "by side (CPU seconds, states per CPU second, bytes per state, the vector "
                             "engine's parts), instead of every mode")
    parser.add_argument("--all", action="store_true",
                        help="measure every named configuration at two processes (its own constants but "
                             "P=2, or those given with -c), safety and safety+liveness on the default "
                             "engine side by side, with the engine's parts: what check --all -c P=2 runs "
                             f"(--max-states defaults to {ALL_MAX_STATES:,} here)")
    parser.add_argument("--validate", action="store_true",
                        help="instead, time `validate` on seeded random runs of Holds (P=2, D=60, MaxTime=200) "
                             "written as logs of about 1,040 lines: with no action silent, then Publish and "
                             "Ingest, then MaintStep and InterStep as well; at twice and four times the length (with "
                             "Publish and Ingest silent, and with Publish and MaintStep; and with Publish and "
                             "Ingest silent, each ending with a snapshot of every variable, which measures the "
                             "length alone); and header-only logs at wide constants")
    parser.set_defaults(run=run)


def worker_counts(text: str) -> tuple:
    """`--workers 1,2,auto` as worker counts; argparse turns a bad one into a usage line."""
    from protocol.cli.common import workers_count

    counts = tuple(workers_count(part.strip()) for part in text.split(",") if part.strip())
    if not counts:
        raise argparse.ArgumentTypeError("give worker counts, e.g. 1,2")
    if len(set(counts)) < len(counts):  # auto may be the same count as one given
        raise argparse.ArgumentTypeError(f"{text} gives a worker count twice: give each once")
    return counts


def rungs_from(args) -> tuple:
    if args.rung and args.constant:
        raise UsageError("give the constants with -c (one rung) or --rung (a ladder), not both")
    if args.constant:
        rungs = ({**Config().constants, **constants_from(args)},)
    elif args.rung:
        rungs = tuple(rung(text) for text in args.rung)
        twice = [text for number, text in enumerate(args.rung) if rungs[number] in rungs[:number]]
        if twice:
            raise UsageError(f"--rung {twice[0]} given twice: give each rung once")
    else:
        rungs = LADDER
    for constants in rungs:
        Config(**constants)  # refuse a bad rung before anything is measured
    return rungs


def rung(text: str) -> dict:
    """One `--rung P=2,D=2,MaxTime=2` as a constants dict; a constant given twice is refused."""
    constants: dict = {}
    for part in (p for p in text.split(",") if p.strip()):
        name, value = parse_constant(part, "--rung")
        if name in constants:
            raise UsageError(f"--rung {text}: {name} given twice: give it once")
        constants[name] = value
    return constants


def line(record: dict) -> str:
    """One measurement as a line of text, printed as soon as it is taken."""
    constants = ",".join(f"{k}={v}" for k, v in record["constants"].items())
    head = f"{record['config']} {constants} {record['mode']}:"
    if "error" in record:
        return f"{head} error: {record['error']}"
    if "skipped" in record:
        return f"{head} {record['skipped']}"
    if not record.get("complete"):
        return f"{head} cut at {record['distinct_states']:,} distinct states (does not fit)"
    figures = [f"{record['distinct_states']:,} distinct states"]
    if record.get("reduced_states") is not None:
        figures.append(f"{record['reduced_states']:,} reduced")
    if "edges" in record:
        figures.append(f"{record['edges']:,} edges")
    figures.append(f"{record['seconds']:.2f} s")
    if "seconds_each" in record:
        figures[-1] += f" (least of {', '.join(f'{each:.2f}' for each in record['seconds_each'])})"
    if "cpu_seconds" in record:
        figures.append(f"{record['cpu_seconds']:.2f} s CPU")
    figures.append(f"{record['peak_memory_mb']:,} MB peak")
    if "workers" in record:
        figures.append(f"{record['states_per_second_per_worker']:,} states/s per worker, "
                       f"{record['bytes_per_state']} bytes exchanged per state")
    return f"{head} " + ", ".join(figures)


def all_plan(args) -> tuple:
    """`bench --all`: (the constants, every configuration's name, the modes), refusing the
    options that choose configurations, rungs or modes of their own."""
    for given, option in ((args.config, "--config"), (args.rung, "--rung"), (args.workers, "--workers"),
                          (args.engines, "--engines"), (args.scc, "--scc")):
        if given:
            raise UsageError(f"--all measures every configuration in its own modes: drop {option}")
    from protocol.configurations.named import named_configurations

    constants = {**ALL_CONSTANTS, **constants_from(args)}
    return (constants,), tuple(named_configurations()), ALL_MODES


def run_validate(args) -> int:
    """`bench --validate`: one line per measurement as taken (JSON Lines with --json), then the table."""
    from protocol.tools.bench import validate_ladder

    records: list[dict] = []
    interrupted = False
    from protocol.render.terminal import fitted, folded  # a table wider than the terminal: a list of its rows

    with output_to(None) as sink:
        console = wide_console(sink, PIPE_WIDTH)

        def on_record(record: dict) -> None:
            records.append(record)
            print(json.dumps(record) if args.json else folded(validate_line(record), console.width), file=sink,
                  flush=True)

        if args.json:
            print(json.dumps({"machine": machine()}), file=sink, flush=True)
        try:
            validate_ladder(on_record)
        except KeyboardInterrupt:
            interrupted = True
        if not args.json and records:
            from protocol.render.bench import validate_table

            console.print(fitted(validate_table(records, machine()), console.width))
        return settle(sink, complete=not interrupted, as_expected=True, interrupted=interrupted,
                      why=f"{len(records)} measurements taken, the rest not")


def validate_line(record: dict) -> str:
    from protocol.render.bench import open_text

    constants = ",".join(f"{k}={v}" for k, v in record["constants"].items())
    head = f"validate {record['config']} {constants} {record['case']}:"
    if "error" in record:
        return f"{head} {record['error']}"
    per_line = f", {1000 * record['cpu_seconds'] / record['lines']:.2f} ms per line" if record["states"] else ""
    open_ = f", open at the end: {open_text(record['open_at_end'])}" if record.get("open_at_end") else ""
    return (f"{head} {record['lines']:,} lines, {record['verdict']}{open_}, {record['seconds']:.2f} s "
            f"({record['cpu_seconds']:.2f} s CPU{per_line}), {record['peak_memory_mb']:,} MB peak")


def run(args) -> int:
    if args.validate:
        given = [flag for flag, on in (("--all", args.all), ("--workers", args.workers), ("--engines", args.engines), ("--scc", args.scc),
                                       ("--rung", args.rung), ("--config", args.config), ("-c", args.constant),
                                       ("--repeat", args.repeat > 1))
                 if on]
        if given:
            raise UsageError(f"--validate measures its own logs: drop {given[0]}")
        return run_validate(args)
    if args.all:
        rungs, names, modes = all_plan(args)
        max_states = args.max_states or ALL_MAX_STATES
        return measured(args, rungs, names, modes, max_states, widenings=())
    if args.workers and args.scc:
        raise UsageError("--workers measures safety and safety+liveness only, not the --scc split: give one")
    names_twice = sorted({name for name in args.config if args.config.count(name) > 1})
    if names_twice:
        raise UsageError(f"--config {names_twice[0]} given twice: name each configuration once")
    rungs = rungs_from(args)
    names = tuple(lookup(name).name for name in args.config) or CONFIGURATIONS
    modes = MODES + (SCC_MODES if args.scc else ())
    if args.workers:
        from protocol.tools.bench import WORKER_MODES, worker_mode

        modes = tuple(worker_mode(mode, workers) for mode in WORKER_MODES for workers in args.workers)
    if args.engines:
        from protocol.tools.bench import ENGINE_MODES, ENGINES, engine_mode

        if args.workers:
            raise UsageError("--engines compares the sequential engines: drop --engines or --workers")
        modes = tuple(engine_mode(mode, engine) for mode in ENGINE_MODES for engine in ENGINES)
    chosen = args.config or args.rung or args.constant  # the default run adds the widenings
    if args.workers and not chosen:
        return measured(args, (), (), (), args.max_states or ALL_MAX_STATES, widenings=(), workers=args.workers)
    return measured(args, rungs, names, modes, args.max_states or DEFAULT_MAX_STATES,
                    widenings=() if chosen else WIDENINGS)


def measured(args, rungs, names, modes, max_states: int, widenings, workers: tuple = ()) -> int:
    """Take the measurements one by one (a line each as taken), then print the tables;
    with `workers` (and no rungs), the runs of `worker_runs` with each count."""
    records: list[dict] = []
    interrupted = False
    from protocol.render.terminal import fitted, folded  # a table wider than the terminal: a list of its rows

    with output_to(None) as sink:
        console = wide_console(sink, PIPE_WIDTH)
        show = (lambda r: print(json.dumps(r), file=sink, flush=True)) if args.json else \
               (lambda r: print(folded(line(r), console.width), file=sink, flush=True))
        if args.json:
            show({"machine": machine()})

        def on_record(record: dict) -> None:
            records.append(record)
            show(record)

        ceiling = None
        try:
            most = max(args.workers or (1,))
            if most > 1:  # what the machine itself lets threads pay
                from protocol.render.bench import ceiling_text
                from protocol.tools.bench import threads_ceiling

                ceiling = {"workers": most, "ratio": threads_ceiling(most)}
                print(json.dumps({"threads_ceiling": ceiling}) if args.json else folded(
                      f"this machine: {ceiling_text(ceiling)} (the least ratio {most} workers can give here)",
                      console.width), file=sink, flush=True)
            if workers:
                from protocol.tools.bench import worker_runs

                worker_runs(workers, max_states, on_record=on_record, repeat=args.repeat)
            else:
                ladder(rungs, names, modes, max_states=max_states, on_record=on_record, widenings=widenings,
                       repeat=args.repeat)
        except KeyboardInterrupt:
            interrupted = True  # what was measured is printed already, and tabled below
        if not args.json and records and args.all:
            from protocol.render.bench import every_configuration_table

            console.print(fitted(every_configuration_table(records, machine()), console.width))
        elif not args.json and records:
            from protocol.render.bench import bench_table, scc_table

            if not args.engines and not workers:
                console.print(fitted(bench_table(records, machine(), max_states, width=console.width), console.width))
            from protocol.render.bench import workers_table

            if args.workers:
                console.print(fitted(workers_table(records, ceiling), console.width))
            if args.engines:
                from protocol.render.bench import engines_table

                console.print(fitted(engines_table(records), console.width))
            split = scc_table(records)
            if split is not None:
                console.print(fitted(split, console.width))
        return settle(sink, complete=not interrupted, as_expected=True, interrupted=interrupted,
                      why=f"{len(records)} measurements taken, the rest not")
