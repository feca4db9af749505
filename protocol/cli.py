"""The command line: `python -m protocol check Holds`, `check --all`, `list`.

Exit codes: 0 when every verdict is as expected, 1 when any is not (or the
run was cut short: Ctrl-C, --max-states, a skipped configuration, a closed
output pipe), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from .config import ConfigError, lookup, named_configurations, parse_constant

EXIT_AS_EXPECTED, EXIT_NOT_AS_EXPECTED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A usage error: printed as one line, exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        raise UsageError(f"{message} (see `{self.prog} --help`)")


# ------------------------------------------------------------------ shared


def add_constants_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-c", "--constant", action="append", default=[], metavar="NAME=VALUE",
        help="override a constant (P, D, MaxTime); repeatable: -c P=3 -c D=2",
    )


def at_least_one(text: str) -> int:
    """An argparse type: a whole number >= 1 (argparse turns the error into a usage line)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number: give N >= 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is out of range: give N >= 1")
    return value


def constants_from(args) -> dict:
    return dict(parse_constant(text) for text in args.constant)


def selected_configurations(args) -> list:
    """The named configurations the command names (or all of them), with -c applied."""
    if args.all and args.names:
        raise UsageError("give configuration names or --all, not both")
    if not args.all and not args.names:
        raise UsageError(
            f"name a configuration or give --all; known: {', '.join(named_configurations())}"
        )
    chosen = list(named_configurations().values()) if args.all else [lookup(n) for n in args.names]
    constants = constants_from(args)
    return [named.with_constants(constants) for named in chosen]


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
        "seconds": round(result.seconds, 3),
        "complete": result.complete,
        "properties": {
            name: {"holds": verdict.holds, "trace_length": verdict.trace_length}
            for name, verdict in result.properties.items()
        },
        "as_expected": result.as_expected,
    }
    if getattr(result, "fingerprint_collision", None) is not None:  # only with --fingerprints
        record["fingerprint_collision_probability"] = result.fingerprint_collision
    return json.dumps(record)


# ------------------------------------------------------------------- check


def add_check_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "check", help="explore named configurations and compare verdicts with expectations",
        description="Explore every reachable state breadth-first and check every property.",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="configuration names (see `list`)")
    parser.add_argument("--all", action="store_true", help="check every named configuration")
    add_constants_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object per configuration per line")
    parser.add_argument("--stop-on-violation", action="store_true",
                        help="stop at the first violation found (TLC's default behaviour)")
    parser.add_argument("--max-states", type=at_least_one, metavar="N",
                        help="cut the search after N distinct states (unreduced, also with --symmetry); "
                             "the result is then incomplete")
    parser.add_argument("--full", action="store_true", help="show every variable of every trace state")
    parser.add_argument("--format", choices=("terminal", "markdown", "itf", "mermaid", "html"), default="terminal",
                        help="how to write results and counterexamples (itf: one JSON document per line; "
                             "html: the page of `report`)")
    add_output_option(parser, "write results to FILE instead of standard output (never with ANSI codes)")
    parser.add_argument("--no-trace", action="store_true", help="show only the summaries")
    parser.add_argument("--symmetry", action="store_true",
                        help="explore one state per orbit of process permutations (not with the cap); "
                             "counts stay unreduced, the reduced one is added")
    parser.add_argument("--no-liveness", action="store_true",
                        help="check the safety properties only: no edges kept, no liveness verdict")
    parser.add_argument("--fingerprints", action="store_true",
                        help="keep a 64-bit fingerprint per state instead of the state (safety only; "
                             "TLC's memory bound), and report the chance of a collision")
    parser.set_defaults(run=run_check)


def run_check(args) -> int:
    from .run import check

    if args.json and args.format != "terminal":
        raise UsageError(f"--json and --format {args.format} both choose the output: give one")
    if args.format == "html":  # an alias of `report`: one page for every configuration named
        from .report_cli import run_report

        return run_report(args)
    plan, skipped = checkable(selected_configurations(args), args)  # refuse before anything is written
    check_writable(args.output)
    with opened_output(args.output) as out:
        console = make_console(out if args.output else None)
        show_progress = console.is_terminal and not args.json
        started = time.perf_counter()
        results = []
        for named, options in plan:
            result = check_one(check, named, options, console, show_progress)
            results.append(result)
            emit(result, args, console, out)
            if result.interrupted:
                break
        if (len(results) > 1 or skipped) and not args.json and args.format == "terminal":
            from .render import render_totals

            render_totals(console, results, time.perf_counter() - started, skipped)
    ok = all(r.as_expected for r in results) and len(results) == len(plan) and not skipped
    return EXIT_AS_EXPECTED if ok else EXIT_NOT_AS_EXPECTED


def checkable(chosen: list, args) -> tuple[list, list]:
    """Each configuration with its check options, and the names skipped.

    A configuration the options cannot check is refused (exit 2) when named.
    Under --all it is skipped with a note, and the run exits 1: a skipped
    configuration has no verdict, so the run cannot say every one is as expected.
    """
    plan, skipped = [], []
    for named in chosen:
        try:
            plan.append((named, check_options(named, args)))
        except (UsageError, ConfigError) as refusal:
            if not args.all:
                raise
            skipped.append(named.name)
            print(f"protocol: skipped {named.name}: {refusal}", file=sys.stderr)
    return plan, skipped


def check_options(named, args) -> dict:
    """The options of `run.check` the flags ask for, or a refusal naming the flag to drop."""
    options = dict(max_states=args.max_states, stop_on_violation=args.stop_on_violation)
    if args.no_liveness:
        refuse_unchecked_expectation(named, "--no-liveness")
        options.update(liveness=False)
    if args.symmetry:
        from .symmetry import refuse_unless_symmetric

        refuse_unless_symmetric(named.config, named.name)
        options.update(symmetry=True)
    if args.fingerprints:
        from .run import refuse_liveness_with_fingerprints

        refuse_liveness_with_fingerprints(named, options.get("liveness", True))
        options.update(fingerprints=True)
    return options


def check_one(check, named, options: dict, console, show_progress: bool):
    if not show_progress:
        return check(named, **options)
    from .render import ProgressView

    with ProgressView(console, named.name) as view:
        return check(named, on_progress=view.update, **options)


def refuse_unchecked_expectation(named, option: str, fix: str | None = None) -> None:
    """A configuration expected to violate a liveness property cannot be checked without it."""
    import invariants

    if named.expected_violation() in invariants.LIVENESS_PROPERTIES:
        raise UsageError(f"{named.name} must violate {named.expected_violation()}, a liveness property, "
                         f"and {option} leaves it unchecked: {fix or 'drop ' + option}")


def emit(result, args, console, out) -> None:
    if args.json:
        print(json_line(result), file=out, flush=True)
        return
    if args.format != "terminal":
        from .export import export_result

        if not any(v.trace for v in result.properties.values()):
            print(f"protocol: {result.named.name} has no counterexample to write as {args.format}",
                  file=sys.stderr)
        return export_result(result, args.format, out, full=args.full)
    from .render import render_result

    render_result(console, result, show_traces=not args.no_trace, full=args.full)


# ------------------------------------------------------------------ output


def add_output_option(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--output", metavar="FILE", help=help)


def check_writable(path: str | None) -> None:
    """Refuse an --output path that cannot be written, before anything is run or written."""
    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"--output {path} is a directory: give a file name")
    if not target.parent.is_dir():
        raise UsageError(f"--output {path}: directory {target.parent} does not exist; create it first")


@contextmanager
def opened_output(path: str | None):
    """Standard output, or the --output file, opened only now that the run is accepted."""
    if path is None:
        yield sys.stdout
        return
    try:
        stream = open(path, "w", encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write --output {path}: {error.strerror}") from None
    with stream:
        yield stream


def make_console(output=None):
    from .render import console_for

    return console_for(file=output)


# -------------------------------------------------------------------- list


def add_list_parser(subparsers) -> None:
    parser = subparsers.add_parser("list", help="list the named configurations and what they expect")
    parser.set_defaults(run=run_list)


def run_list(args) -> int:
    from .render import configurations_table

    make_console().print(configurations_table(named_configurations().values()))
    return EXIT_AS_EXPECTED


# -------------------------------------------------------------------- main

# `check` and `list` are defined above; every other subcommand lives in its own
# module, which imports this module's helpers, and is imported once this module
# is complete: (module, the function that adds its parser).
SUBCOMMAND_MODULES = [
    ("matrix", "add_matrix_parser"),
    ("simulate", "add_simulate_parser"),
    ("export", "add_graph_parser"),
    ("bench", "add_bench_parser"),
    ("docs", "add_docs_parser"),
    ("report_cli", "add_report_parsers"),
]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="protocol", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for add in (add_check_parser, add_list_parser):
        add(subparsers)
    for module, function in SUBCOMMAND_MODULES:
        getattr(importlib.import_module(f".{module}", __package__), function)(subparsers)
    parser.set_defaults(commands=sorted(subparsers.choices))  # for "name a command"
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "run", None):
            raise UsageError("name a command: " + ", ".join(args.commands))
        return args.run(args)
    except (UsageError, ConfigError) as error:
        print(f"protocol: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # the reader went away (`| head`): the rest was never reported
        sys.stdout = open(os.devnull, "w")  # so that the final flush at exit cannot fail again
        return EXIT_NOT_AS_EXPECTED

