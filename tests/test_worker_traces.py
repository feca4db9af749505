"""What `check --workers N` promises (its --help): the counts, depths, verdicts and shortest lengths of
one worker on every refutation, whatever the engine and the worker count; with the vector engine's
threads, the very traces one worker prints. The packed engine's worker processes may find another
shortest trace (HoldsRouted: AdvancePolicy before DropPeek), which --help says."""

from __future__ import annotations

import pytest

from protocol.model.config import named_configurations
from protocol.run import check

# The refutations of at most 60,000 states (each is checked five times, worker processes included):
# the larger ones are held to one worker's figures by tests/test_section12_engines.py,
# tests/test_section13_engines.py and the sweeps.
REFUTATIONS = [name for name, named in named_configurations().items()
               if named.expect and named.pinned is not None and named.pinned[0] <= 60_000]
# Each comparison starts worker processes (about eight seconds a configuration): two in the quick run,
# the rest with the slow tests.
QUICK = ("HoldsRouted", "HoldsPeerByReader")


def figures(result) -> dict:
    return {"counts": (result.distinct_states, result.depth, result.transitions),
            "verdicts": {prop: (v.holds, v.trace_length) for prop, v in result.properties.items()}}


def traces(result) -> dict:
    return {prop: [str(step.action) for step in v.trace.steps] for prop, v in result.properties.items()
            if v.trace is not None}


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in REFUTATIONS])
def test_every_worker_count_and_engine_gives_one_worker_s_figures_and_threads_its_traces(name):
    named = named_configurations()[name]
    one = check(named)
    for workers in (2, 3):
        threads = check(named, workers=workers, engine="vector")
        assert figures(threads) == figures(one) and traces(threads) == traces(one), workers
        processes = check(named, workers=workers, engine="packed")
        assert figures(processes) == figures(one), workers
