"""Every engine's result is one `engine.interface.Run`: the same counts, level sizes,
verdicts and first depths, whichever engine made it (HoldsRouted, a fraction of a second)."""

from __future__ import annotations

import pytest

from protocol.properties import reachable

from protocol.configurations.named import lookup
from protocol.engine.interface import Run
from protocol.engine.partitioned.search import explore_parallel
from protocol.model.next import model_for
from protocol.run import explore_config
from test_fast import readable_run_at_its_constants

NAMED = lookup("HoldsRouted")


def parallel_run():
    from functools import partial

    return explore_parallel(partial(model_for, NAMED.config), 2, record_edges=True)


ENGINES = {
    "readable": None,  # the reference run itself: exploring it twice would prove nothing more
    "packed": lambda: explore_config(NAMED.config, record_edges=True),
    "symmetry": lambda: explore_config(NAMED.config, record_edges=True, symmetry=True),
    "fingerprints": lambda: explore_config(NAMED.config, fingerprints=True),
    "workers": parallel_run,
}


@pytest.fixture(scope="module")
def reference():
    return readable_run_at_its_constants(NAMED.name)  # the readable model's plain search


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_offers_the_same_run(engine, reference):
    counts, trace = reference.counts(), reference.counterexample("I1")
    run = reference if engine == "readable" else ENGINES[engine]()
    try:
        assert isinstance(run, Run)
        found = run.counts()
        assert (found.distinct_states, found.transitions, found.depth) == (8917, 36496, 17)
        assert found.level_sizes == counts.level_sizes and sum(found.level_sizes) == 8917
        assert (found.reduced_states is not None) is (engine == "symmetry")
        assert run.violated() == ["I1"] and len(run.counterexample("I1")) == len(trace) == 6
        assert run.liveness_decidable is (engine != "fingerprints")
        if engine != "fingerprints":
            decided = run.decide_liveness(model_for(NAMED.config))["CompactionNotStalled"]
            assert decided.holds is True and not decided.vacuous
            # predicates travel to the partitions: module functions bound to the configuration
            predicates = reachable.predicates_for(["CompactionSent", "ReaderStranded"], NAMED.config)
            assert run.first_reached(predicates) == {"CompactionSent": 2, "ReaderStranded": None}
    finally:
        run.close()
