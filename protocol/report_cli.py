"""The `report` and `explore` subcommands: the review page and the state explorer.

`report NAME... | --all [--matrix]` checks the configurations and writes one
self-contained HTML page (protocol/report.py draws it); `explore NAME` serves
the state explorer (protocol/explore_server.py) on loopback until Ctrl-C.
Exit codes are those of `check`; a usage error is one line and exit 2.
"""

from __future__ import annotations

import argparse
import errno
import sys

from .cli import (
    EXIT_AS_EXPECTED, EXIT_NOT_AS_EXPECTED, UsageError, add_constants_option, add_output_option,
    check_writable, constants_from, opened_output, selected_configurations,
)

DEFAULT_PORT = 8765


def add_report_parsers(subparsers) -> None:
    add_report_parser(subparsers)
    add_explore_parser(subparsers)


# ------------------------------------------------------------------ report


def add_report_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="write one self-contained HTML page of checked configurations, for review",
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
    parser.set_defaults(run=run_report)


def run_report(args) -> int:
    """Check, draw the page whole, and only then write it: an interrupted run writes nothing."""
    from .report import report_html
    from .run import check

    with_matrix = getattr(args, "matrix", False)  # `check --format html` has no --matrix
    chosen = [] if with_matrix and not (args.names or args.all) else selected_configurations(args)
    check_writable(args.output)
    try:
        results = [check(named) for named in chosen]
        if any(result.interrupted for result in results):
            raise KeyboardInterrupt
        matrix = _matrix(constants_from(args)) if with_matrix else None
    except KeyboardInterrupt:
        print("protocol: interrupted: no report written", file=sys.stderr)
        return EXIT_NOT_AS_EXPECTED
    html = report_html(results, matrix)
    with opened_output(args.output) as out:
        out.write(html)
    ok = all(result.as_expected for result in results) and (matrix is None or matrix.as_expected)
    return EXIT_AS_EXPECTED if ok else EXIT_NOT_AS_EXPECTED


def _matrix(constants: dict):
    from .config import Config
    from .matrix import run_matrix

    matrix = run_matrix({**Config().constants, **constants})
    if not matrix.complete:  # run_matrix keeps what Ctrl-C left; a page of half a matrix would mislead
        raise KeyboardInterrupt
    return matrix


# ------------------------------------------------------------------ explore


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 for any free one."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number: give 0..65535") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is out of range: give a port in 0..65535 (0: any free port)")
    return value


def add_explore_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "explore", help="step through the model's states in a browser (a local web server)",
        description="Serve the state explorer on 127.0.0.1: start at the initial state (or at the "
                    "counterexample with --from-trace), take enabled actions, step back, jump to the "
                    "shortest path. Ctrl-C stops it.",
    )
    parser.add_argument("name", metavar="NAME", help="a configuration name (see `list`)")
    add_constants_option(parser)
    parser.add_argument("--port", type=port_number, default=DEFAULT_PORT, metavar="N",
                        help=f"the port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--from-trace", action="store_true",
                        help="start at the last state of the configuration's shortest counterexample")
    parser.set_defaults(run=run_explore)


def run_explore(args) -> int:
    from .config import lookup
    from .explore_server import LOOPBACK, Explorer

    named = lookup(args.name).with_constants(constants_from(args))
    trace = _start_trace(named) if args.from_trace else None
    server = _bound_server(Explorer(named, trace), args.port)
    port = server.server_address[1]
    print(f"protocol: exploring {named.name} at http://{LOOPBACK}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("protocol: explorer stopped", file=sys.stderr)
    finally:
        server.server_close()
    return EXIT_AS_EXPECTED


def _start_trace(named):
    from .export import counterexample

    trace = counterexample(named)
    if trace is None:
        raise UsageError(f"{named.name} has no counterexample to start from: drop --from-trace")
    return trace


def _bound_server(explorer, port: int):
    from .explore_server import LOOPBACK, make_server

    try:
        return make_server(explorer, port)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise UsageError(f"port {port} on {LOOPBACK} is in use: give another with --port N "
                             "(--port 0 picks a free one)") from None
        raise UsageError(f"cannot listen on {LOOPBACK}:{port}: {error.strerror}; "
                         "give another port with --port N") from None
