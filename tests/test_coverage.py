"""Coverage per action, as TLC reports it (issue 56, point 2): per action, the transitions it took and
the distinct states it found first, alike from the readable search and every engine that keeps what it
counts; a never-enabled action is warned about in one line."""

from __future__ import annotations

import json

import pytest

from helpers import cli  # noqa: F401  (the fixture)
from protocol.engine.checker import explore
from protocol.engine.interface import action_name
from protocol.configurations.named import named_configurations
from protocol.model.next import model_for
from protocol.run import check

ENGINES = {"packed": dict(engine="packed"), "vector": dict(engine="vector"),
           "vector-workers": dict(engine="vector", workers=2)}
# A few small ones with the sequential engines in the quick run; every configuration, and threads,
# with the slow tests.
QUICK = ("HoldsPeer",)
SEQUENTIAL = {name: ENGINES[name] for name in ("packed", "vector")}


def readable_coverage(cfg) -> dict:
    """What the coverage must be: counted from the readable search's own graph."""
    model = model_for(cfg)
    run = explore(model.initial_states, model.successors, record_edges=True)
    counted = run.coverage()
    return {name: counted.get(name, (0, 0)) for name in dict.fromkeys(action_name(l) for l in model.labels)}


def assert_same_coverage(name: str, engines=ENGINES) -> None:
    """A test suite helper: per action, every engine's coverage is the readable search's, so a
    disagreement between engines names the action that causes it."""
    named = named_configurations()[name]
    expected = readable_coverage(named.config)
    assert sum(found for _, found in expected.values()) == named.pinned[0] - 1  # every state but the initial
    for engine, options in engines.items():
        got = check(named, coverage=True, **options).coverage
        differing = {action: (got[action], counts) for action, counts in expected.items() if got[action] != counts}
        assert not differing, f"{name}, {engine}: coverage differs for {differing}"


@pytest.mark.parametrize("name", QUICK)
def test_the_sequential_engines_count_the_readable_search_s_coverage(name):
    assert_same_coverage(name, SEQUENTIAL)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, named in named_configurations().items() if named.size_class == "quick"])
def test_every_engine_counts_the_readable_search_s_coverage_on_every_quick_configuration(name):
    assert_same_coverage(name, {key: ENGINES[key] for key in ("vector", "vector-workers")})


def test_an_action_never_enabled_is_warned_about_in_one_line(cli):
    # with no time to move to, nothing compacts, no data arrives and maintenance receives nothing
    # (exit 1: Holds expects states this run cannot reach, such as a published since advancing)
    code, out, err = cli("check", "Holds", "-c", "MaxTime=0", "--coverage", "--json")
    record = json.loads(out)
    never = ["AdvancePolicy", "Ingest", "MaintStep", "Publish"]
    assert code == 1 and record["never_enabled"] == never
    assert record["coverage"]["AdvancePolicy"] == {"transitions": 0, "distinct_states": 0}
    assert err.splitlines() == [f"protocol: Holds: {name} is never enabled in any reachable state (its guard never "
                                "holds)" for name in never]


def test_coverage_sums_to_the_counts_and_is_refused_where_it_cannot_be_counted(cli):
    code, out, _ = cli("check", "HoldsRouted", "--coverage", "--json")
    record = json.loads(out)
    assert sum(c["transitions"] for c in record["coverage"].values()) == record["transitions"]
    assert sum(c["distinct_states"] for c in record["coverage"].values()) == record["distinct_states"] - 1
    for flags in (["--symmetry"], ["--fingerprints", "--no-liveness"], ["--engine", "packed", "--workers", "2"]):
        code, out, err = cli("check", "Holds", "--coverage", *flags)
        assert code == 2 and out == "" and err.count("\n") == 1 and "--coverage" in err
