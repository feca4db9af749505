"""`protocol report NAME... | --all [--matrix]`: one self-contained HTML page of checked
configurations (protocol/report.py draws it). Exit codes are those of `check`; an
interrupted run writes nothing."""

from __future__ import annotations

from .common import (
    EXIT_AS_EXPECTED, EXIT_NOT_AS_EXPECTED, add_constants_option, add_output_option, check_writable,
    constants_from, output_to, selected_configurations, warn,
)


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help,
        description="Check the named configurations and write one HTML file (no network needed to view "
                    "it): verdicts, each counterexample as a sequence diagram and a step table, a "
                    "lasso's cycle; with --matrix, the mechanism matrix as a grid.",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="configuration names (see `list`)")
    parser.add_argument("--all", action="store_true", help="every named configuration, on one page with an index")
    parser.add_argument("--matrix", action="store_true",
                        help="add the mechanism matrix (checks every combination: a minute or two)")
    add_constants_option(parser)
    add_output_option(parser, "write the page to FILE instead of standard output")
    parser.set_defaults(run=run)


def run(args) -> int:
    """Check, draw the page whole, and only then write it: an interrupted run writes nothing."""
    from ..report import report_html
    from ..run import check

    with_matrix = getattr(args, "matrix", False)  # `check --format html` has no --matrix
    chosen = [] if with_matrix and not (args.names or args.all) else selected_configurations(args)
    check_writable(args.output)
    try:
        results = [check(named) for named in chosen]
        if any(result.interrupted for result in results):
            raise KeyboardInterrupt
        matrix = _matrix(constants_from(args)) if with_matrix else None
    except KeyboardInterrupt:
        warn("interrupted: no report written")
        return EXIT_NOT_AS_EXPECTED
    html = report_html(results, matrix)
    with output_to(args.output) as sink:
        sink.write(html)
    ok = all(result.as_expected for result in results) and (matrix is None or matrix.as_expected)
    return EXIT_AS_EXPECTED if ok else EXIT_NOT_AS_EXPECTED


def _matrix(constants: dict):
    from ..config import Config
    from ..matrix import run_matrix

    matrix = run_matrix({**Config().constants, **constants})
    if not matrix.complete:  # run_matrix keeps what Ctrl-C left; a page of half a matrix would mislead
        raise KeyboardInterrupt
    return matrix
