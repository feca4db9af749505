"""`protocol list`: the named configurations, the switches each changes from Holds,
and what each must violate."""

from __future__ import annotations

from protocol.configurations.named import named_configurations
from protocol.cli.common import EXIT_AS_EXPECTED, make_console, output_to


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(name, help=help, description=help)
    parser.set_defaults(run=run)


def run(args) -> int:
    from protocol.render.terminal import configurations_table

    with output_to(None) as sink:
        console = make_console(sink)
        console.print(configurations_table(named_configurations().values(), console.width))
    return EXIT_AS_EXPECTED
