"""`protocol check NAME ... | --all`: explore named configurations and compare
every verdict with what the configuration expects."""

from __future__ import annotations

from protocol import properties as props
import json
import time

from protocol import run as checking
from protocol.model.config import ConfigError
from protocol.cli.common import (
    MAX_STATES_LIMIT, RunFailure, UsageError, add_constants_option, add_output_option, add_workers_option,
    check_writable, make_console, output_to, refuse_together, selected_configurations, settle,
    warn, whole_number,
)

FORMATS = ("terminal", "markdown", "itf", "mermaid")


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help, description="Explore every reachable state breadth-first and check every property.",
    )
    add_selection_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object per configuration per line")
    add_search_options(parser)
    parser.add_argument("--full", action="store_true", help="show every variable of every trace state")
    parser.add_argument("--format", choices=(*FORMATS, "html"), default="terminal",
                        help="how to write results and counterexamples (itf: one JSON document per line; "
                             "mermaid: a .mmd sequence diagram; html: the page of `report`)")
    add_output_option(parser, "write results to FILE instead of standard output (never with ANSI codes); "
                              "an existing FILE is replaced only by a complete run (or by an html page cut short by "
                              "--max-states, marked INCOMPLETE)")
    parser.add_argument("--no-trace", action="store_true", help="show only the summaries")
    add_names_option(parser)
    parser.set_defaults(run=run)


def add_names_option(parser) -> None:
    """How a trace names its actions: ours, the design's TLA+ model's, or both (model/tla.py)."""
    from protocol.model.tla import NAMES

    parser.add_argument("--names", choices=NAMES, dest="names_as",
                        help="how a trace names its actions: ours, as the design's TLA+ model (Holds.tla) "
                             "does, or both side by side (the default for a configuration that mirrors that "
                             "model, the Tla* ones; tla and both are refused elsewhere)")


def add_selection_options(parser) -> None:
    """The configurations a command checks: names or --all, with -c constants."""
    parser.add_argument("names", nargs="*", metavar="NAME", help="configuration names (see `list`)")
    parser.add_argument("--all", action="store_true", help="check every named configuration")
    add_constants_option(parser)


def add_search_options(parser) -> None:
    """How the search runs: the same options, read the same way, for every format and for `report`."""
    parser.add_argument("--stop-on-violation", action="store_true",
                        help="stop at the first violation found (TLC's default behaviour); "
                             "the run is then incomplete and exits 3 (1 if the violation is not an expected one)")
    parser.add_argument("--max-states", type=whole_number(1, MAX_STATES_LIMIT, "what fits in memory"), metavar="N",
                        help="cut the search after N distinct states (unreduced, also with --symmetry); "
                             "the result is then incomplete (exit 3)")
    parser.add_argument("--symmetry", action="store_true",
                        help="explore one state per orbit of process permutations (not with the cap); "
                             "counts stay unreduced, the reduced one is added")
    parser.add_argument("--no-liveness", action="store_true",
                        help="check the safety properties only: no edges kept, no liveness verdict")
    parser.add_argument("--coverage", action="store_true",
                        help="per action, as TLC reports it: the transitions it took and the distinct states it "
                             "found first; warns of an action never enabled (keeps the edges; not with "
                             "--symmetry, --fingerprints or worker processes)")
    parser.add_argument("--fingerprints", action="store_true",
                        help="keep a 64-bit fingerprint per state instead of the state (safety only; "
                             "TLC's memory bound), and report the chance of a collision")
    add_workers_option(parser, "share the search among N threads (auto: one per core; where the vector "
                               "engine does not apply, or with --engine packed, N worker processes); same "
                               "counts, depths, verdicts and traces as one")
    parser.add_argument("--engine", choices=checking.ENGINES,
                        help="the sequential search: vector (numpy, a level at a time; the default where it "
                             "applies) or packed (a state at a time); same counts, verdicts and traces")
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run the partitions as actors on the Ray cluster at ADDRESS (host:port, or "
                             "`local` for a Ray started here); needs pip install '.[cluster]'")


def refuse_contradictions(args) -> None:
    if args.json and args.format != "terminal":
        raise UsageError(f"--json and --format {args.format} both choose the output: give one")
    refuse_together(args, "--no-trace", "--full", "--full shows every variable of the traces --no-trace hides")
    if args.no_trace and args.format in ("itf", "mermaid", "html"):
        raise UsageError(f"--format {args.format} writes every trace, which --no-trace hides: give one")
    if args.full and (args.json or args.format in ("itf", "mermaid", "html")):
        raise UsageError("--full applies to the terminal and markdown traces only: drop it")
    if args.format == "mermaid" and (args.all or len(args.names) > 1):
        raise UsageError("--format mermaid writes one diagram (a .mmd file): name one configuration")
    chosen_names = getattr(args, "names_as", None)
    if chosen_names in ("tla", "both") and args.all:
        raise UsageError(f"--names {chosen_names} applies to the configurations that mirror the design's TLA+ "
                         "model only: name them (the Tla* ones) instead of --all")
    if chosen_names is not None and (args.json or args.no_trace or args.format == "itf"):
        shown = "--json" if args.json else "--no-trace" if args.no_trace else "--format itf"
        raise UsageError(f"--names names the actions of a drawn trace, which {shown} does not draw: drop --names")
    twice = sorted({name for name in args.names if args.names.count(name) > 1})
    if twice:
        raise UsageError(f"{', '.join(twice)} named twice: name each configuration once")


def run(args) -> int:
    refuse_contradictions(args)
    return check_and_write(args, plan_of(args))


def plan_of(args) -> tuple[list, list]:
    """Each configuration to check with its options, and those skipped; refused before anything is written."""
    chosen = selected_configurations(args)
    check_writable(args.output)  # before the notes of configurations skipped: a usage error is one line
    return checkable(chosen, args)


def check_and_write(args, planned, matrix_constants: dict | None = None) -> int:
    """The one path of every check: `check` in every format, and `report`. Each
    configuration is checked in turn, the loop stopping at the first interrupt;
    a page (--format html, `report`) is drawn only from a run not interrupted."""
    plan, skipped = planned
    page = args.format == "html"
    results = []
    with output_to(args.output) as sink:
        console = make_console(sink)
        show_progress = console.is_terminal and not args.json and not page
        started = time.perf_counter()
        for named, options in plan:
            result = check_one(named, options, console, show_progress)
            results.append(result)
            if not page:
                emit(result, args, console, sink)
            if result.interrupted:
                break
        matrix = None
        if matrix_constants is not None and not any(r.interrupted for r in results):
            matrix = checked_matrix(matrix_constants)
        interrupted = any(r.interrupted for r in results) or (matrix is not None and not matrix.complete)
        complete = len(results) == len(plan) and not skipped and all(r.complete for r in results)
        if page and not interrupted:
            from protocol.render.report import report_html

            sink.write(report_html(results, matrix, names=getattr(args, "names_as", None)))
        if args.output and not sink.written and not interrupted and (args.all or len(args.names) > 1):
            warn(f"nothing to write: {args.output} left as it was")
        if (len(results) > 1 or skipped) and not args.json and args.format == "terminal":
            from protocol.render.terminal import render_totals

            render_totals(console, results, time.perf_counter() - started, skipped,
                          title="check --all" if args.all else "check")
        return settle(
            sink,
            complete=complete,
            as_expected=all(r.as_expected for r in results) and (matrix is None or matrix.as_expected),
            interrupted=interrupted,
            why=interrupted_why(results) if not page else "no page drawn",
            refuted=any(r.refuted for r in results) or (matrix is not None and matrix.refuted),
            # a page cut short by --max-states or --stop-on-violation says so on its face, and is
            # written; one that leaves out a skipped configuration would not say so, and is not
            marked=page and not skipped,
        )


def checked_matrix(constants: dict):
    """The mechanism matrix at `constants` (for the page); its `complete` says whether Ctrl-C cut it."""
    from protocol.model.config import Config
    from protocol.tools.matrix import run_matrix

    return run_matrix({**Config().constants, **constants})


def interrupted_why(results: list) -> str:
    """What a Ctrl-C cut short: the search, or (the search complete) the liveness decision."""
    if any(result.interrupted and result.complete for result in results):
        return "interrupted while deciding liveness; the safety verdicts stand"
    return "the search was cut short; its counts are those explored"


def checkable(chosen: list, args) -> tuple[list, list]:
    """Each configuration with its check options, and the names skipped.

    A configuration the options cannot check is refused (exit 2) when named.
    Under --all it is skipped with a note, and the run is incomplete (exit 3 unless
    another verdict is not as expected): a skipped configuration has no verdict, so
    the run cannot say every one is as expected.
    """
    plan, skipped = [], []
    for named in chosen:
        try:
            plan.append((named, check_options(named, args)))
        except (UsageError, ConfigError) as refusal:
            if not args.all:
                raise
            skipped.append(named.name)
            warn(f"skipped {named.name}: {refusal}")
    return plan, skipped


def check_options(named, args) -> dict:
    """The options of `run.check` the flags ask for, or a refusal naming the flag to drop."""
    options = dict(max_states=args.max_states, stop_on_violation=args.stop_on_violation)
    if getattr(args, "names_as", None) is not None:
        from protocol.model.tla import NamingError, naming

        try:
            naming(named.config, args.names_as)
        except NamingError as refusal:
            raise UsageError(f"{named.name}: {refusal}") from None
    if args.no_liveness:
        refuse_unchecked_expectation(named, "--no-liveness")
        options.update(liveness=False)
    if args.symmetry:
        from protocol.engine import Refusal
        from protocol.model.next import model_for

        try:
            model_for(named.config).refuse_unless_symmetric(named.name)
        except Refusal as refusal:
            raise UsageError(str(refusal)) from None
        options.update(symmetry=True)
    if args.fingerprints:
        checking.refuse_liveness_with_fingerprints(named, options.get("liveness", True))
        options.update(fingerprints=True)
    if args.engine is not None:
        options.update(engine=args.engine)
    if getattr(args, "coverage", False):
        for flag, given in (("symmetry", args.symmetry), ("fingerprints", args.fingerprints),
                            ("cluster", args.cluster is not None)):
            if given:
                raise UsageError(f"--coverage counts each state and step, which --{flag} does not keep: "
                                 f"drop --{flag} or --coverage")
        if args.workers > 1 and args.engine == "packed":
            raise UsageError("--coverage counts each state and step, which the packed engine's worker processes "
                             "do not gather: drop --engine packed or --coverage")
        options.update(coverage=True)
    if args.workers > 1 or args.cluster is not None:
        for flag in ("symmetry", "fingerprints"):
            if getattr(args, flag):
                raise UsageError(f"--{flag} is sequential only: drop --{flag} or --workers/--cluster")
        options.update(workers=max(args.workers, 2 if args.cluster is not None else 1), cluster=args.cluster)
    return options


def check_one(named, options: dict, console, show_progress: bool):
    from protocol.engine.partitioned.search import WorkerLost

    try:
        if not show_progress:
            return checking.check(named, **options)
        from protocol.render.terminal import ProgressView

        with ProgressView(console, named.name) as view:
            return checking.check(named, on_progress=view.update, **options)
    except WorkerLost as lost:  # no verdict from a partial search: one line, exit 4
        raise RunFailure(f"{named.name}: {lost}") from None


def refuse_unchecked_expectation(named, option: str, fix: str | None = None) -> None:
    """A configuration expected to violate a liveness property cannot be checked without it."""
    liveness = checking.expected_liveness(named)
    if liveness:
        raise UsageError(f"{named.name} must violate {liveness[0]}, a liveness property, "
                         f"and {option} leaves it unchecked: {fix or 'drop ' + option}")


def emit(result, args, console, sink) -> None:
    for name in result.never_enabled:  # in every format, as TLC warns of an action never enabled
        warn(f"{result.named.name}: {name} is never enabled in any reachable state (its guard never holds)")
    if args.json:
        print(json_line(result), file=sink, flush=True)
        return
    if args.format != "terminal":
        from protocol.render.export import export_result

        if args.format != "markdown" and not any(v.trace for v in result.properties.values()):
            alone = len(args.names) == 1 and not args.all  # then this line is the run's only word on it
            kept = f"; {args.output} left as it was" if alone and args.output else ""
            warn(f"{result.named.name} has no counterexample to write as {args.format}: nothing written"
                 + (kept if alone else " for it"))
            return
        return export_result(result, args.format, sink, full=args.full, names=getattr(args, "names_as", None))
    from protocol.render.terminal import render_coverage, render_result

    render_result(console, result, show_traces=not args.no_trace, full=args.full,
                  names=getattr(args, "names_as", None))
    if result.coverage is not None:
        render_coverage(console, result.coverage)


def json_line(result) -> str:
    """One JSON Lines record of a check (the schema of docs/checker.md)."""
    record = {
        "config": result.named.name,
        "constants": result.config.constants,
        "switches": result.config.switches,
        "distinct_states": result.distinct_states,
        **({"reduced_states": result.reduced_states} if result.reduced_states is not None else {}),
        "transitions": result.transitions,
        "depth": result.depth,
        **({"coverage": {name: {"transitions": taken, "distinct_states": found}
                         for name, (taken, found) in result.coverage.items()},
            "never_enabled": result.never_enabled} if result.coverage is not None else {}),
        "seconds": round(result.seconds, 3),
        "complete": result.complete and not result.interrupted,
        "properties": {
            name: {"holds": verdict.holds, "trace_length": verdict.trace_length,
                   **({"vacuous": verdict.vacuous} if verdict.premises is not None else {})}  # a liveness one held
            for name, verdict in result.properties.items()
        },
        **({"reachable": result.reachable} if result.named.reachable else {}),  # name -> first depth, or null
        "as_expected": result.as_expected,
    }
    if getattr(result, "engine", None) is not None:  # which engine ran, and why not the vector one
        record["engine"] = result.engine
    not_applicable = props.not_applicable_for(result.config)
    if not_applicable:  # only where a property the summary would list does not apply (physical = from_cuts)
        record["not_applicable"] = not_applicable
    if result.count_mismatches():  # only when the counts differ from the manifest's: both pinned figures
        record["pinned"] = dict(zip(("distinct_states", "depth"), result.named.pinned))
    if getattr(result, "parallel", None) is not None:  # only with --workers/--cluster: distinct states per level
        record["level_sizes"] = result.parallel["level_sizes"]
    if getattr(result, "fingerprint_collision", None) is not None:  # only with --fingerprints
        record["fingerprint_collision_probability"] = result.fingerprint_collision
    return json.dumps(record)
