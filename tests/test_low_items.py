"""Issue 24's low items that were still open: GraphML's booleans, the refusal of a
constant past a limit, the matrix grid's width, broken pipes, and tables at 60
columns that wrap at word boundaries instead of cutting words."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ElementTree

import networkx as nx
import pytest

from helpers import cli  # noqa: F401  (a fixture)

GRAPHML = "{http://graphml.graphdrawing.org/xmlns}"


def test_graphml_writes_booleans_as_its_boolean_type_spells_them():
    """networkx declared the key `boolean` and wrote Python's True/False (XML Schema: true/false)."""
    from protocol.export import graph_graphml

    graph = nx.DiGraph()
    graph.add_node(0, initial=True, on_trace=False, label="0")
    graph.add_node(1, initial=False, on_trace=True, label="True")  # a string stays as it is
    graph.add_edge(0, 1, on_trace=False, action="Tick")
    text = graph_graphml(graph)
    root = ElementTree.fromstring(text)
    keys = {key.get("id"): (key.get("attr.name"), key.get("attr.type")) for key in root.iter(f"{GRAPHML}key")}
    values = {(keys[data.get("key")][0], keys[data.get("key")][1], data.text) for data in root.iter(f"{GRAPHML}data")}
    booleans = {value for name, kind, value in values if kind == "boolean"}
    assert booleans == {"true", "false"}, values
    assert ("label", "string", "True") in values
    back = nx.read_graphml(io.BytesIO(text.encode()))
    assert back.nodes["0"]["initial"] is True and back.nodes["1"]["initial"] is False


@pytest.mark.parametrize("argv", [["check", "Holds"], ["check", "Holds", "--symmetry"], ["simulate", "Holds"],
                                  ["graph", "Holds"], ["matrix"]])
def test_a_constant_past_its_bound_names_the_real_limit_not_an_option(cli, argv):
    """`check Holds -c P=1000` cited --symmetry, which lifts no bound (and is not even given)."""
    code, out, err = cli(*argv, "-c", "P=1000")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1, err
    assert "P must be <= 8" in err and "multiplies the reachable states" in err
    assert "--" not in err.split("P must be <= 8", 1)[1], err  # no option is the fix
