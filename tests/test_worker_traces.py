"""What `check --workers N` promises (its --help): the counts, depths, verdicts and traces of one
worker on every refutation, whatever the engine and the worker count. The packed engine's worker
processes once printed another shortest trace (HoldsRouted: AdvancePolicy before DropPeek, and
HoldsBroadcast, HoldsReleaseOnMaint, HoldsAcquireFloorAgent): they know each violation's length,
not which of its equals one worker meets first, so the coordinator finds one worker's again."""

from __future__ import annotations

import pytest

from protocol.configurations.named import named_configurations
from protocol.run import check

# The refutations of at most 60,000 states (each is checked five times, worker processes included):
# the larger ones are held to one worker's figures by tests/test_section12_engines.py,
# tests/test_section13_engines.py and the sweeps.
REFUTATIONS = [name for name, named in named_configurations().items()
               if named.expect and named.pinned is not None and named.pinned[0] <= 60_000]
# Each comparison starts worker processes (about a second a configuration): two in the quick run,
# the rest with the slow tests.
QUICK = ("HoldsRouted", "HoldsUnfair")


def figures(result) -> dict:
    return {"counts": (result.distinct_states, result.depth, result.transitions),
            "verdicts": {prop: (v.holds, v.trace_length) for prop, v in result.properties.items()}}


def traces(result) -> dict:
    return {prop: [str(step.action) for step in v.trace.steps] for prop, v in result.properties.items()
            if v.trace is not None}


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in REFUTATIONS])
def test_every_worker_count_and_engine_gives_one_worker_s_figures_and_traces(name):
    named = named_configurations()[name]
    one = check(named)
    assert traces(check(named, engine="packed")) == traces(one)
    for workers in (2, 3):
        threads = check(named, workers=workers, engine="vector")
        assert figures(threads) == figures(one) and traces(threads) == traces(one), workers
        processes = check(named, workers=workers, engine="packed")
        assert figures(processes) == figures(one) and traces(processes) == traces(one), workers


LARGER = [name for name, named in named_configurations().items()
          if named.expect and named.pinned is not None and named.pinned[0] > 60_000]


@pytest.mark.slow
@pytest.mark.parametrize("name", LARGER)
def test_the_larger_refutations_print_one_worker_s_traces_with_worker_processes(name):
    """The refutations above 60,000 states: one comparison each, two worker processes
    against one worker (their figures are held to one worker's by the engine tests)."""
    named = named_configurations()[name]
    assert traces(check(named, workers=2, engine="packed")) == traces(check(named))
