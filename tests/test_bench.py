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
