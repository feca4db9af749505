"""`protocol matrix`: every combination of the mechanism switches, checked, and the
minimal sufficient sets of mechanisms derived from a complete table."""

from __future__ import annotations

import json

import attrs

from protocol.model.config import Config
from protocol.tools.matrix import (
    FAMILIES, Matrix, derivation_record, estimate, markdown, matrix_switches, plan, refused_by_constants,
    row_record, run_matrix,
)
from protocol.cli.common import (
    JOBS_LIMIT, UsageError, add_constants_option, constants_from, output_to, settle, warn, whole_number, wide_console,
)

PIPE_WIDTH = 80  # a pipe (`matrix | head`) gets what a terminal would; the table wraps, it loses nothing


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help,
        # the switches named from the matrix's own list: a switch added to it is in --help too
        description=f"Check every combination of {' x '.join(matrix_switches())} (fairness on) "
                    "and derive the minimal sufficient sets of mechanisms.",
    )
    add_constants_option(parser)
    parser.add_argument("--family", choices=tuple(FAMILIES), default="mechanisms",
                        help="; ".join(f"{name}: {family.meaning}" for name, family in FAMILIES.items())
                        + " (default mechanisms; shipped runs at P=1, E=1 unless -c says otherwise)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object per row as it is checked (JSON Lines), then the derived sets")
    parser.add_argument("--format", choices=("table", "markdown"), default=None,
                        help="table (rich, the default) or markdown")
    parser.add_argument("--jobs", "-j", type=whole_number(1, JOBS_LIMIT, "two per CPU"), default=1, metavar="N",
                        help="check N combinations at a time in worker processes (default 1)")
    parser.set_defaults(run=run)


def run(args) -> int:
    if args.json and args.format is not None:
        raise UsageError(f"--json and --format {args.format} both choose the output: give one")
    family = FAMILIES[args.family]
    constants = {**Config().constants, **family.constants, **constants_from(args)}
    Config(**constants, **family.fixed)  # refuse bad constants before anything runs
    rows = plan(constants, family)
    say_how_long(constants, family)
    with output_to(None) as sink:
        console = wide_console(sink, PIPE_WIDTH)
        if args.json:
            matrix = run_matrix(constants, args.jobs, on_done=streamer(rows, sink), family=family)
            print(json.dumps(derivation_record(matrix)), file=sink, flush=True)
        else:
            matrix = run_with_progress(constants, args.jobs, rows, console, family)
            if args.format == "markdown":
                print(markdown(matrix), file=sink, flush=True)
            else:
                from protocol.render.matrix import render_matrix

                render_matrix(console, matrix)
        return settle(sink, complete=matrix.complete, as_expected=matrix.as_expected,
                      interrupted=matrix.interrupted, refuted=matrix.refuted,
                      why="combinations not checked to the end are unknown; no minimal set derived")


def say_how_long(constants, family) -> None:
    """Before the run, on stderr: the combinations the constants refuse, if any, and past
    the default constants how long at least."""
    from protocol.render.matrix import estimate_line, refused_line

    line = refused_line(constants, *refused_by_constants(constants, family))
    if line is not None:
        warn(line)
    line = estimate_line(estimate(constants, family))
    if line is not None:
        warn(line)


def streamer(rows: list, sink):
    """on_done for --json: each row's record as soon as it is checked, then the rows
    that are the same system. Remarks that need the whole table come at the end."""
    def on_done(row, outcome) -> None:
        done = [attrs.evolve(row, outcome=outcome)]
        done += [other for other in rows if other.same_as == row.number]
        partial = Matrix(tuple(done[0] if r.number == row.number else r for r in rows), family=row.family)
        for each in done:
            print(json.dumps(row_record(each, partial, minimal=[])), file=sink, flush=True)

    return on_done


def run_with_progress(constants, jobs: int, rows: list, console, family) -> Matrix:
    if not console.is_terminal:
        return run_matrix(constants, jobs, family=family)
    from protocol.render.matrix import MatrixProgress

    with MatrixProgress(console, len(rows)) as progress:
        def advance(row, outcome) -> None:  # a row and the rows that are the same system
            progress.advance(row, 1 + sum(other.same_as == row.number for other in rows))

        return run_matrix(constants, jobs, on_done=advance, family=family)
