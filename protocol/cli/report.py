"""`protocol report NAME... | --all [--matrix]`: one self-contained HTML page of checked
configurations (protocol/render/report.py draws it). It is `check --format html` with
--matrix: the same options, the same search, the same exit codes; an
interrupted run writes nothing, one cut short by --max-states its page, marked INCOMPLETE."""

from __future__ import annotations

from protocol.cli.check import (
    add_names_option, add_search_options, add_selection_options, check_and_write, plan_of, refuse_contradictions,
)
from protocol.cli.common import add_output_option, constants_from


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help,
        description="Check the named configurations and write one HTML file (no network needed to view "
                    "it): verdicts, each counterexample as a sequence diagram and a step table, a "
                    "lasso's cycle; with --matrix, the mechanism matrix as a grid.",
    )
    add_selection_options(parser)
    parser.add_argument("--matrix", action="store_true",
                        help="add the mechanism matrix (checks every combination: a minute or two)")
    add_search_options(parser)
    add_names_option(parser)
    add_output_option(parser, "write the page to FILE instead of standard output; "
                              "an existing FILE is replaced only by a run not interrupted (one cut "
                              "short by --max-states writes its page, marked INCOMPLETE)")
    parser.set_defaults(run=run, format="html", json=False, full=False, no_trace=False)


def run(args) -> int:
    refuse_contradictions(args)
    planned = ([], []) if args.matrix and not (args.names or args.all) else plan_of(args)
    if not planned[0]:
        from protocol.cli.common import check_writable

        check_writable(args.output)
    return check_and_write(args, planned, constants_from(args) if args.matrix else None)
