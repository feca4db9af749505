"""The benchmark's figures come from the checks it runs, and its table shows
where a rung did not fit."""

from protocol.tools.bench import measure, measure_fresh
from protocol.render.terminal import plain_text
from protocol.render.bench import bench_table

MACHINE = {"cpus": 2, "load_average_1min": 0.5, "python": "3"}


def test_a_measurement_reports_the_checks_counts():
    safety = measure("Holds", {"P": 1, "D": 1, "MaxTime": 1}, "safety", max_states=10**6)
    reduced = measure("Holds", {"P": 1, "D": 1, "MaxTime": 1}, "symmetry", max_states=10**6)
    assert safety["complete"] and safety["distinct_states"] == reduced["distinct_states"]
    assert safety["transitions"] == reduced["transitions"]
    assert reduced["reduced_states"] <= reduced["distinct_states"]
    assert safety["peak_memory_mb"] > 0


def test_a_rung_past_max_states_shows_as_cut():
    cut = measure_fresh("Holds", {"P": 2, "D": 1, "MaxTime": 2}, "safety", max_states=100)
    assert not cut["complete"]
    text = plain_text(bench_table([cut], MACHINE, 100), width=160)
    assert "cut" in text and "Holds" in text


def test_a_measurement_names_the_engine_its_parts_and_a_fallback():
    vector = measure("Holds", {"P": 1, "D": 1, "MaxTime": 1}, "safety+liveness", max_states=10**6)
    assert vector["engine"] == "vector" and "liveness:masks" in vector["parts"]
    assert "engine_why" not in vector and "liveness_per_state" not in vector
    packed = measure("HoldsSealTap", {"P": 1, "D": 1, "MaxTime": 1}, "safety", max_states=10**6)
    assert packed["engine"] == "packed" and "whole footprint" in packed["engine_why"]


def test_bench_all_plans_every_configuration_at_two_processes():
    import argparse

    import pytest

    from protocol.cli.bench import all_plan
    from protocol.cli.common import UsageError
    from protocol.model.config import named_configurations

    args = argparse.Namespace(config=[], rung=[], workers=None, engines=False, scc=False, constant=[])
    rungs, names, modes = all_plan(args)
    assert rungs == ({"P": 2},) and names == tuple(named_configurations())
    assert modes == ("safety", "safety+liveness")
    args.constant = ["MaxTime=1"]
    assert all_plan(args)[0] == ({"P": 2, "MaxTime": 1},)
    args.engines = True
    with pytest.raises(UsageError, match="drop --engines"):
        all_plan(args)


def test_the_every_configuration_table_shows_ratios_fallbacks_and_refusals():
    from protocol.render.bench import every_configuration_table

    def record(name, mode, cpu, **more):
        return {"config": name, "constants": {"P": 2}, "mode": mode, "complete": True, "distinct_states": 1000,
                "cpu_seconds": cpu, "states_per_cpu_second": round(1000 / cpu), "peak_memory_mb": 50,
                "engine": "vector", "parts": {"components": cpu / 2, "liveness:masks": cpu / 4, "sort": 0.001},
                **more}

    records = [record("HoldsAlias", "safety", 4.0), record("HoldsAlias", "safety+liveness", 5.0),
               record("HoldsSealTap", "safety", 2.0, engine="packed", engine_why="Ingest reads every process's locals"),
               record("HoldsX", "safety+liveness", 3.0, liveness_per_state={"Odd": "x ~> y: its premise reads the whole state"}),
               {"config": "HoldsOne", "constants": {"P": 2}, "mode": "safety", "error": "HoldsOne is defined at P=1"}]
    text = plain_text(every_configuration_table(records, MACHINE), width=260)
    row = next(line for line in text.splitlines() if line.strip().startswith("HoldsAlias"))
    assert "1.25" in row and "liveness:masks 1.25" in row and "sort" not in row
    assert row.split().index("250") < row.split().index("200")  # states per CPU second: safety, then with liveness
    assert "packed: Ingest reads every process's locals" in text
    assert "Odd per state: x ~> y: its premise reads the whole state" in text
    assert "HoldsOne is defined at P=1" in text


def test_check_json_names_a_liveness_property_evaluated_per_state(monkeypatch):
    """A leads-to side that reads the whole state is evaluated on every state, and
    check --json says so in its engine record."""
    import json

    import attrs

    from protocol.cli.check import json_line
    from protocol.engine import STATE
    from protocol.model import next as model_next
    from protocol.model.config import lookup
    from protocol.run import check

    built = model_next.model_for

    def whole_premises(cfg):
        model = built(cfg)
        pairs = [attrs.evolve(pair, premise_reads=STATE) for pair in model.liveness["CompactionNotStalled"]]
        return attrs.evolve(model, liveness={**model.liveness, "CompactionNotStalled": pairs})

    monkeypatch.setattr("protocol.run.model_for", whole_premises)
    result = check(lookup("Holds").with_constants({"P": 1, "D": 1, "MaxTime": 1}))
    engine = json.loads(json_line(result))["engine"]
    assert engine["name"] == "vector"
    assert "its premise reads the whole state" in engine["liveness_per_state"]["CompactionNotStalled"]
