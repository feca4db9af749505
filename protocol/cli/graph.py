"""`protocol graph NAME`: the reachable state graph as Graphviz DOT or GraphML."""

from __future__ import annotations

from protocol import run as checking
from protocol.configurations.named import lookup
from protocol.engine.checker import explore
from protocol.render.export import DEFAULT_GRAPH_LIMIT, GraphTooLarge, graph_dot, graph_graphml, state_graph
from protocol.model.next import model_for
from protocol.cli.common import (
    GRAPH_STATES_LIMIT, EXIT_AS_EXPECTED, UsageError, add_constants_option, add_output_option, check_writable,
    constants_from, output_to, warn, whole_number,
)


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help,
        description="Explore a configuration and write its reachable state graph: nodes are "
                    "states (numbered in breadth-first order), edges are action instances.",
    )
    parser.add_argument("name", metavar="NAME", help="a configuration name (see `list`)")
    add_constants_option(parser)
    parser.add_argument("--format", choices=("dot", "graphml"), default="dot", help="dot (default) or graphml")
    parser.add_argument("--max-states", metavar="N", default=DEFAULT_GRAPH_LIMIT,
                        type=whole_number(1, GRAPH_STATES_LIMIT, "no layout tool draws more"),
                        help=f"refuse graphs with more than N states (default {DEFAULT_GRAPH_LIMIT:,})")
    parser.add_argument("--highlight-trace", action="store_true",
                        help="colour the shortest counterexample's states and steps red")
    add_output_option(parser, "write to FILE instead of standard output; an existing FILE is "
                              "replaced only once the whole graph is written")
    parser.set_defaults(run=run)


def explore_graph(named, limit: int):
    """The reachable graph of `named` with its edges, or GraphTooLarge past `limit` states."""
    model = model_for(named.config)
    run = explore(model.initial_states, model.successors, max_states=limit + 1, record_edges=True)
    if run.interrupted:
        raise KeyboardInterrupt
    if run.distinct_states > limit:
        raise GraphTooLarge(
            f"{named.name} has more than {limit:,} reachable states: raise the guard with "
            f"--max-states N, or shrink the model with -c (for example -c MaxTime=1)"
        )
    return run


def counterexample(named):
    """The counterexample to the property `named` is expected to violate (or the first violated)."""
    result = checking.check(named)
    violated = [p for p, v in result.properties.items() if v.trace is not None]
    if not violated:
        return None
    expected = named.expected_violation()
    return result.violation(expected if expected in violated else violated[0])


def run(args) -> int:
    named = lookup(args.name).with_constants(constants_from(args))
    check_writable(args.output)
    try:  # a graph past the guard is refused before it is explored to the end
        explored = explore_graph(named, args.max_states)
    except GraphTooLarge as error:
        raise UsageError(str(error)) from None
    highlight = None
    if args.highlight_trace:
        highlight = counterexample(named)
        if highlight is None:
            warn(f"{named.name} has no counterexample: nothing to highlight")
    graph = state_graph(explored, highlight)
    text = graph_dot(graph, named.name) if args.format == "dot" else graph_graphml(graph)
    with output_to(args.output) as sink:
        sink.write(text)
    return EXIT_AS_EXPECTED
