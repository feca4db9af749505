"""Markdown, ITF and Mermaid traces for every refutation, and the state-graph export."""

from __future__ import annotations

import io
import json
import re

import networkx as nx
import pytest

import protocol.run
from helpers import cached_check, checked
from protocol.cli import main
from protocol.engine.checker import explore
from protocol.model.config import HOLDS
from protocol.configurations.named import lookup, named_configurations
from protocol.render.export import (
    GraphTooLarge, export_result, graph_dot, graph_graphml, state_graph, trace_markdown,
    trace_mermaid,
)
from protocol.tools.itf import from_itf, state_from_itf, state_to_itf, trace_itf
from protocol.cli.graph import explore_graph
from protocol.model.next import model_for
from protocol.model.next import replay
from protocol.model.trace import Step, Trace

REFUTATIONS = [name for name, named in named_configurations().items() if named.violates]


def refutation_trace(name: str) -> tuple:
    named = lookup(name)
    result = checked(name)
    return result.violation(named.violates), result


# ------------------------------------------------- every refutation, every format


@pytest.mark.parametrize("name", REFUTATIONS)
def test_markdown_lists_every_step_and_the_witnesses(name):
    trace, result = refutation_trace(name)
    text = trace_markdown(trace, result.config, names="ours")  # the design's names: test_vocabulary.py
    assert text.startswith(f"### Counterexample to {trace.prop}: {trace.length} states")
    for number, step in enumerate(trace.steps[1:], start=2):
        assert f"{number}. **`{step.action}`**" in text
    if trace.is_lasso:  # a liveness counterexample is explained by its notes
        assert f"The run {'stutters forever' if trace.stutters else 'back to'}" in text
        assert all(f"> {note}" in text for note in trace.notes if "forever" not in note)
    else:
        assert f"**{trace.prop} is violated** in the last state" in text
    assert "\x1b" not in text


@pytest.mark.parametrize("name", REFUTATIONS)
def test_itf_is_json_with_one_state_per_trace_state_and_parses_back(name):
    trace, _ = refutation_trace(name)
    document = json.loads(json.dumps(trace_itf(trace, source=name)))
    assert document["#meta"]["format"] == "ITF"
    assert len(document["states"]) == trace.length
    assert [s["#meta"]["index"] for s in document["states"]] == list(range(trace.length))
    assert set(document["vars"]) <= set(document["states"][0])
    back = from_itf(json.dumps(document))
    assert [step.state for step in back.steps] == [step.state for step in trace.steps]
    assert [step.action for step in back.steps] == [step.action for step in trace.steps]
    assert back == trace


@pytest.mark.parametrize("name", REFUTATIONS)
def test_mermaid_draws_every_participant_and_marks_the_violating_step(name):
    trace, result = refutation_trace(name)
    text = trace_mermaid(trace, result.config)
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram" and "```" not in text  # a .mmd file, not Markdown
    processes = range(len(trace.steps[0].state.since))
    for participant in ["controller", "multiplexer", *(f"{lane}{p}" for p in processes for lane in ("maint", "inter", "pub"))]:
        assert f"participant {participant} as" in text
    red = lines.index("    rect rgb(255, 221, 221)")
    assert f"{trace.length}. {trace.steps[-1].action}" in lines[red + 1]
    assert f"violates {trace.prop}:" in text
    labels = [re.sub(r"#\w+;", "", line.split(": ", 1)[1]) for line in lines if ": " in line]
    assert not any(set(label) & set(";#<>") for label in labels)  # mermaid would misread them


@pytest.mark.parametrize("fmt", ["markdown", "itf", "mermaid"])
@pytest.mark.parametrize("name", REFUTATIONS)
def test_every_format_produces_output_for_every_refutation(name, fmt):
    out = io.StringIO()
    export_result(checked(name), fmt, out)
    assert out.getvalue().strip()


# -------------------------------------------------------------------- ITF


def all_states(name: str, limit: int = 20_000, **constants):
    model = model_for(lookup(name).with_constants(constants).config)
    return explore(model.initial_states, model.successors, max_states=limit).states


@pytest.mark.parametrize("name, constants", [
    ("HoldsCapReconnect", {"MaxTime": 3}),  # the cap and a reconnection (2,720 states)
    pytest.param("HoldsAliasShared", {"MaxTime": 1}, marks=pytest.mark.quick),  # per-id frontiers, ix, Export
    pytest.param("HoldsAliasOverwrite", {"MaxTime": 1}, marks=pytest.mark.quick),  # stranded readers
    pytest.param("HoldsCap", {}, marks=pytest.mark.slow), ("HoldsReleaseOnMaint", {}), ("HoldsAcquire", {})])
def test_every_reachable_state_survives_the_itf_round_trip(name, constants):
    states = all_states(name, **constants)
    assert len(states) > 1000
    for state in states:
        assert state_from_itf(json.loads(json.dumps(state_to_itf(state)))) == state


def test_itf_encodes_sets_maps_sequences_and_commands_as_documented():
    cfg = lookup("HoldsReleaseOnMaint").config
    steps = replay(cfg, ["CreatePeek(0, 1)", "DropPeek(0)", "MaintStep(0)", "MaintStep(0)"])
    encoded = state_to_itf(steps[2].state)
    assert encoded["caps"] == {"#set": []}
    assert encoded["df"] == {"#map": [[0, "Dropped"]]}
    assert encoded["as_of"] == {"#map": [[0, 1]]}
    assert encoded["mq"]["#map"][1][1] == [{"tag": "Acquire", "value": {"d": 0, "t": 1}},
                                           {"tag": "Release", "value": {"d": 0}}]
    assert encoded["since"] == {"#map": [[0, 0], [1, 0]]}
    assert state_to_itf(steps[3].state)["acq"] == {"#map": [[0, {"#map": [[0, 1]]}], [1, {"#map": []}]]}


def test_itf_reads_bigints():
    encoded = json.loads(json.dumps(state_to_itf(replay(HOLDS, ["AdvancePolicy"])[1].state)))
    encoded["policy"] = {"#bigint": "1"}
    assert state_from_itf(encoded).policy == 1


def test_a_lasso_keeps_its_loop_in_itf():
    steps = replay(HOLDS.evolve(fairness=False), ["AdvancePolicy"])
    lasso = Trace("CompactionNotStalled", tuple(steps), loop=1, stutters=True, notes=("why",))
    document = trace_itf(lasso)
    assert document["loop"] == 1
    assert from_itf(json.dumps(document)) == lasso
    assert "loop" not in trace_itf(refutation_trace("HoldsRouted")[0])


# --------------------------------------------------------------------- CLI


@pytest.fixture
def cli(monkeypatch, capsys):
    monkeypatch.setattr(protocol.run, "check", cached_check)

    def run(*argv):
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_check_format_itf_prints_one_json_document_per_counterexample(cli):
    code, out, err = cli("check", "HoldsRouted", "HoldsCap", "--format", "itf")
    assert (code, err) == (0, "")
    documents = [json.loads(line) for line in out.splitlines()]
    assert [len(d["states"]) for d in documents] == [6, 7]
    assert [d["#meta"]["source"] for d in documents] == ["HoldsRouted", "HoldsCap"]


def test_check_format_markdown_heads_the_trace_with_the_summary(cli):
    code, out, _ = cli("check", "HoldsCap", "--format", "markdown")
    assert code == 0
    assert out.index("## `HoldsCap`: as expected") < out.index("### HoldsCap: counterexample to I1: 7 states")
    assert "| I1 | violated (7 states) |" in out


def test_check_output_writes_the_file(cli, tmp_path):
    target = tmp_path / "trace.md"
    code, out, _ = cli("check", "HoldsRouted", "--format", "mermaid", "--output", str(target))
    assert (code, out) == (0, "")
    assert "sequenceDiagram" in target.read_text()


# ------------------------------------------------------------------- graph


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_the_graph_has_every_state_and_transition_and_highlights_the_trace():
    named = lookup("HoldsCap")
    result = checked("HoldsCap")
    trace = result.violation("I1")
    graph = state_graph(explore_graph(named, 10_000), trace)
    assert graph.number_of_nodes() == result.distinct_states
    assert graph.number_of_edges() == result.transitions
    red_nodes = [n for n, data in graph.nodes(data=True) if data.get("color") == "red"]
    red_edges = [(a, b) for a, b, data in graph.edges(data=True) if data.get("color") == "red"]
    assert len(red_nodes) == trace.length and len(red_edges) == trace.length - 1
    assert [graph.edges[e]["action"] for e in red_edges] == [str(s.action) for s in trace.steps[1:]]


def test_dot_and_graphml_carry_the_whole_graph():
    run = explore_graph(lookup("HoldsRouted").with_constants({"MaxTime": 1}), 10_000)
    graph = state_graph(run)
    dot = graph_dot(graph, "HoldsRouted")
    assert dot.startswith('digraph "HoldsRouted" {') and dot.rstrip().endswith("}")
    assert sum(" -> " in line for line in dot.splitlines()) == graph.number_of_edges()
    back = nx.read_graphml(io.BytesIO(graph_graphml(graph).encode()))
    assert (back.number_of_nodes(), back.number_of_edges()) == (graph.number_of_nodes(), graph.number_of_edges())


@pytest.mark.slow  # about a second: the quick run stays near a CPU minute; CI runs it
def test_the_size_guard_refuses_a_graph_past_it():
    with pytest.raises(GraphTooLarge, match="more than 6,000 reachable states.*--max-states"):
        explore_graph(lookup("HoldsCap"), 6_000)
    states, _ = lookup("HoldsCap").pinned  # a guard of exactly the reachable states lets it through
    assert explore_graph(lookup("HoldsCap"), states).distinct_states == states


def test_graph_cli_past_the_guard_is_one_line_and_exit_2(cli):
    code, out, err = cli("graph", "HoldsCap", "--max-states", "100")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--max-states" in err


def test_graph_cli_writes_dot_with_the_trace_in_red(cli, tmp_path):
    target = tmp_path / "g.dot"
    code, _, err = cli("graph", "HoldsRouted", "-c", "MaxTime=1", "--highlight-trace", "--output", str(target))
    assert (code, err) == (0, "")
    text = target.read_text()
    assert text.count('color="red"') == 6 + 5  # six states, five steps


def test_a_lasso_highlights_its_step_back():
    ring = explore([0], lambda n: [("Tick", (n + 1) % 3)], record_edges=True)  # 0 -> 1 -> 2 -> 0
    steps = tuple(Step(label, n) for label, n in [(None, 0), ("Tick", 1), ("Tick", 2)])
    back = state_graph(ring, Trace("P", steps, loop=0))
    assert all(data["on_trace"] for *_, data in back.edges(data=True))
    assert back.nodes[2]["violates"] and not back.nodes[0].get("violates")
    stutter = state_graph(ring, Trace("P", steps, loop=2, stutters=True))
    assert not stutter.edges[2, 0]["on_trace"]  # a stutter takes no step back
    assert sum(data["on_trace"] for *_, data in stutter.edges(data=True)) == 2
