"""`protocol explore NAME`: the state explorer (protocol/apps/explorer.py), served on
loopback until Ctrl-C (or SIGTERM, SIGHUP), which stops it with exit 0."""

from __future__ import annotations

import argparse
import errno

from protocol.configurations.named import lookup
from protocol.lifecycle import how
from protocol.cli.common import EXIT_AS_EXPECTED, UsageError, add_constants_option, constants_from, warn

DEFAULT_PORT = 8765


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 for any free one."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number: give 0..65535") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is out of range: give a port in 0..65535 (0: any free port)")
    return value


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help,
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
    parser.set_defaults(run=run)


def run(args) -> int:
    from protocol.apps.explorer import LOOPBACK, Explorer

    named = lookup(args.name).with_constants(constants_from(args))
    trace = _start_trace(named) if args.from_trace else None
    explorer = Explorer(named, trace)
    server = _bound_server(explorer, args.port)
    port = server.server_address[1]
    try:  # from the line saying where, a signal stops the explorer (exit 0)
        print(f"protocol: exploring {named.name} at http://{LOOPBACK}:{port}/ (Ctrl-C stops)", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP: the one way it stops
        warn(f"explorer stopped ({how()})")
    finally:
        explorer.stopping.set()
        server.server_close()
    return EXIT_AS_EXPECTED


def _start_trace(named):
    from protocol.cli.graph import counterexample

    trace = counterexample(named)
    if trace is None:
        raise UsageError(f"{named.name} has no counterexample to start from: drop --from-trace")
    return trace


def _bound_server(explorer, port: int):
    from protocol.apps.explorer import LOOPBACK, make_server

    try:
        return make_server(explorer, port)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise UsageError(f"port {port} on {LOOPBACK} is in use: give another with --port N "
                             "(--port 0 picks a free one)") from None
        raise UsageError(f"cannot listen on {LOOPBACK}:{port}: {error.strerror}; "
                         "give another port with --port N") from None
