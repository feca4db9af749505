"""Issue 57's "smaller ones", each fixed or documented as intended, by test:

- `report --max-states N --output FILE` printed its page on standard output but wrote nothing
  to FILE: a page cut short by the user's own bound is written (it says INCOMPLETE on its face);
- `matrix --jobs 2` killed as a process group left its two workers unreaped;
- `matrix -c P=8` announced 72 combinations and ended with "0 of 96";
- `bench --workers 1,2 --config NAME` ran safety+liveness@2 on a rung it had said did not fit;
- `bench`'s lines were 83 to 92 columns at COLUMNS=60;
- FORCE_COLOR was ignored in a pipe (a CI log that renders ANSI lost the verdict colours).

The first four and the last run in-process (the `cli` fixture); the matrix killed as a group
runs as a user runs it, in a session of its own.
"""

from __future__ import annotations



# ------------------------------------------------------------------ bench: a rung that does not fit


def nothing_fits(monkeypatch) -> list:
    """Every measurement cut at its bound, in no time; the list of the modes measured."""
    import protocol.tools.bench as bench

    measured = []

    def measure_fresh(name, constants, mode, max_states):
        measured.append(mode)
        return {"config": name, "constants": constants, "mode": mode, "complete": False, "distinct_states": 10}

    monkeypatch.setattr(bench, "measure_fresh", measure_fresh)
    return measured


def test_bench_runs_no_worker_count_of_a_rung_it_said_does_not_fit(monkeypatch):
    """`bench --workers 1,2 --config TlaHolds` printed "safety+liveness: not run: safety does
    not fit" and then ran safety+liveness@2: the skip knew the bare mode name only."""
    import protocol.tools.bench as bench

    measured = nothing_fits(monkeypatch)
    modes = tuple(bench.worker_mode(mode, workers) for mode in bench.WORKER_MODES for workers in (1, 2))
    records = bench.ladder(({"P": 1, "D": 1, "MaxTime": 1},), ("HoldsRouted",), modes, max_states=10)
    assert measured == ["safety", "safety@2"]
    assert [record["mode"] for record in records] == ["safety", "safety@2", "safety+liveness", "safety+liveness@2"]
    assert all("not run: safety does not fit in 10 states" in record["skipped"] for record in records[2:])


def test_bench_runs_no_engine_of_a_rung_it_said_does_not_fit(monkeypatch):
    """The same for --engines: safety/vector cut short skips safety+liveness on either engine."""
    import protocol.tools.bench as bench

    measured = nothing_fits(monkeypatch)
    modes = tuple(bench.engine_mode(mode, engine) for mode in bench.ENGINE_MODES for engine in bench.ENGINES)
    bench.ladder(({"P": 1, "D": 1, "MaxTime": 1},), ("HoldsRouted",), modes, max_states=10)
    assert measured == ["safety/packed", "safety/vector"]
