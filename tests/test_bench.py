"""The benchmark's figures come from the checks it runs, and its table shows
where a rung did not fit."""

import time

import pytest

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


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_a_rung_past_max_states_shows_as_cut():
    cut = measure_fresh("Holds", {"P": 2, "D": 1, "MaxTime": 2}, "safety", max_states=100)
    assert not cut["complete"]
    text = plain_text(bench_table([cut], MACHINE, 100), width=160)
    assert "cut" in text and "Holds" in text


def test_a_measurement_names_the_engine_its_parts_and_a_fallback(monkeypatch):
    vector = measure("Holds", {"P": 1, "D": 1, "MaxTime": 1}, "safety+liveness", max_states=10**6)
    assert vector["engine"] == "vector" and "liveness:masks" in vector["parts"]
    assert "engine_why" not in vector and "liveness_per_state" not in vector
    # no named configuration falls back: keys narrowed to one word of 12 bits make one
    monkeypatch.setattr("protocol.engine.vector.search.WORD", 12)
    monkeypatch.setattr("protocol.engine.vector.search.WORDS", 1)
    packed = measure("HoldsCap", {}, "safety", max_states=10**6)  # its own constants: 13 bits
    assert packed["engine"] == "packed" and "at most 1 words of 12 bits" in packed["engine_why"]


def test_bench_all_plans_every_configuration_at_two_processes():
    import argparse

    import pytest

    from protocol.cli.bench import all_plan
    from protocol.cli.common import UsageError
    from protocol.configurations.named import named_configurations

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
    from protocol.configurations.named import lookup
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


def test_bench_workers_measures_the_two_runs_side_by_side_with_the_wall_ratio_and_the_load(monkeypatch):
    """`bench --workers 1,2` with nothing chosen: issue 31's two runs, each with one worker
    then two; the table gives each the wall ratio to one worker's, the critical path's
    ratio to one worker's CPU seconds, and the load."""
    from protocol.render.bench import workers_table
    from protocol.tools import bench

    taken = []

    def fake(name, constants, mode, max_states):  # no search: the plan and the table are tested
        taken.append((name, constants, mode))
        seconds = 10.0 if "@" not in mode else 5.5
        record = {"config": name, "constants": constants, "mode": mode, "complete": True, "seconds": seconds,
                  "cpu_seconds": 8.0, "critical_seconds": 8.0 if "@" not in mode else 5.2, "peak_memory_mb": 100,
                  "states_per_second": 1000, "bytes_per_state": 70.0, "load_average_1min": 1.25}
        return record if "@" not in mode else {**record, "workers": 2, "bytes_per_state": 0}

    monkeypatch.setattr(bench, "measure_fresh", fake)
    records = bench.worker_runs((1, 2), 10**8)
    assert taken == [("Holds", {"P": 2, "D": 2, "MaxTime": 3}, "safety"),
                     ("Holds", {"P": 2, "D": 2, "MaxTime": 3}, "safety@2"),
                     ("HoldsSealAlias", {"P": 2}, "safety+liveness"),
                     ("HoldsSealAlias", {"P": 2}, "safety+liveness@2")]
    lines = plain_text(workers_table(records), width=200).splitlines()
    two = [line for line in lines if " 2 " in line and ("Holds " in line or "HoldsSealAlias" in line)]
    assert len(two) == 2 and all("0.55" in line and "0.65" in line and "1.25" in line for line in two)
    assert not any("70.0" in line for line in lines)  # one worker's bytes per state are its peak's, not exchanged


def test_repeat_keeps_the_run_of_least_wall_seconds_and_says_so(monkeypatch):
    """`--repeat 3`: each measurement three times, each in a fresh process; the least wall
    seconds are shown, with every run's, and the workers table says what its seconds are."""
    from protocol.cli.bench import line
    from protocol.render.bench import workers_table
    from protocol.tools import bench

    walls = iter([9.0, 7.5, 8.0, 6.0, 4.0, 5.0])

    def fake(name, constants, mode, max_states):
        return {"config": name, "constants": constants, "mode": mode, "complete": True, "seconds": next(walls),
                "cpu_seconds": 8.0, "critical_seconds": 8.0, "peak_memory_mb": 100, "distinct_states": 10,
                "states_per_second": 1000, "load_average_1min": 1.0}

    monkeypatch.setattr(bench, "measure_fresh", fake)
    records = bench.worker_runs((1, 2), 10**8, runs=(("Holds", {"P": 2}, "safety"),), repeat=3)
    assert [(record["seconds"], record["runs"], record["seconds_each"]) for record in records] == \
        [(7.5, 3, [9.0, 7.5, 8.0]), (4.0, 3, [6.0, 4.0, 5.0])]
    assert "7.50 s (least of 9.00, 7.50, 8.00)" in line(records[0])
    text = plain_text(workers_table(records), width=200)
    assert "0.53" in text and "least wall seconds of 3 runs" in " ".join(text.split())
    monkeypatch.setattr(bench, "measure_fresh", lambda *request: {"error": "no"})
    assert bench.measure_least("Holds", {}, "safety", 10, repeat=3) == {"error": "no"}


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_the_threads_ceiling_tells_jobs_that_run_side_by_side_from_jobs_that_take_turns():
    """`bench --workers` measures first how much the machine lets threads pay: jobs that
    let go of the interpreter's lock (numpy's sorts in the bench, sleeps here) run side by
    side in about the time of one; jobs that take turns at one lock (as Python code does
    at the interpreter's) take as long as one after the other."""
    import threading

    from protocol.tools.bench import threads_ceiling

    one_at_a_time = threading.Lock()

    def taking_turns() -> None:
        with one_at_a_time:
            time.sleep(0.03)

    assert threads_ceiling(2, job=lambda: time.sleep(0.03), tries=2) < 0.75
    assert threads_ceiling(2, job=taking_turns, tries=2) > 0.9


def test_the_workers_table_says_the_machine_s_ceiling():
    from protocol.render.bench import workers_table

    record = {"config": "Holds", "constants": {"P": 2}, "mode": "safety", "complete": True, "seconds": 8.0,
              "cpu_seconds": 8.0, "critical_seconds": 8.0, "peak_memory_mb": 100, "load_average_1min": 1.0}
    text = " ".join(plain_text(workers_table([record], {"workers": 2, "ratio": 0.56}), width=200).split())
    assert "2 numpy sorts on 2 threads take 0.56 of their time one after the other" in text
    assert "numpy sorts" not in " ".join(plain_text(workers_table([record]), width=200).split())
