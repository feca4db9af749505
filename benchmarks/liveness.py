"""Liveness benchmark: time and peak memory of `check` with and without liveness,
and of the two ways to split the graph into strongly connected components.

    python benchmarks/liveness.py                      # Holds at D=2
    python benchmarks/liveness.py HoldsUnfair -c D=2 --networkx

Each measurement runs in a fresh process, so the peak resident size
(ru_maxrss) is that measurement's own.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def measure(name: str, constants: dict, what: str) -> dict:
    """Run one measurement in this process and return its figures."""
    from protocol.config import lookup
    from protocol.fast import explore_config
    from protocol.run import check, fair_graph

    named = lookup(name).with_constants(constants)
    started = time.perf_counter()
    figures = {"what": what}
    if what in ("safety", "safety+liveness"):
        result = check(named, liveness=what != "safety")
        figures["states"] = result.distinct_states
        figures["explore_seconds"] = round(result.seconds, 1)
        figures["verdict"] = {k: (v.holds, v.trace_length) for k, v in result.properties.items()}
    else:  # one SCC split of the whole graph, by our Tarjan or by networkx
        run = explore_config(named.config, record_edges=True)
        split = time.perf_counter()
        if what == "tarjan":
            graph = fair_graph(run, named.config)
            graph.cyclic()
        else:
            import networkx as nx

            digraph = nx.DiGraph()
            digraph.add_nodes_from(range(run.distinct_states))
            digraph.add_edges_from(zip(run.edge_src, run.edge_dst))
            sum(1 for _ in nx.strongly_connected_components(digraph))
        figures["scc_seconds"] = round(time.perf_counter() - split, 1)
        figures["edges"] = len(run.edge_src)
    figures["seconds"] = round(time.perf_counter() - started, 1)
    figures["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", nargs="?", default="Holds")
    parser.add_argument("-c", dest="constants", action="append", default=[], help="NAME=VALUE")
    parser.add_argument("--networkx", action="store_true", help="also split the graph with networkx")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    constants = {k: int(v) for k, v in (c.split("=") for c in args.constants or ["D=2"])}
    if args.one:
        print(json.dumps(measure(args.name, constants, args.one)))
        return
    kinds = ["safety", "safety+liveness", "tarjan"] + (["networkx"] if args.networkx else [])
    for kind in kinds:
        command = [sys.executable, __file__, args.name, "--one", kind]
        command += [f"-c{k}={v}" for k, v in constants.items()]
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        print(args.name, constants, out.strip(), flush=True)


if __name__ == "__main__":
    main()
