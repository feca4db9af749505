"""The partitioned search on the vector engine (engine/vector_partition.py): for any
number of workers, the distinct states, transitions, depth, verdicts and
counterexample lengths of the sequential vector engine, and the very traces of
the packed partitioned search; the packed partitions where it does not apply,
saying why; and a SIGTERM that leaves no worker behind."""

from __future__ import annotations

from functools import partial

import pytest

from helpers import combination_id, replace_action

from protocol.model import actions
from protocol.model.state import replace_at
from protocol.model.config import Config, ConfigError
from protocol.configurations.named import NamedConfig, lookup
from protocol.engine.vector import search as vector
from protocol.engine.partitioned.search import Partition, ProcessPool, WorkerLost, explore_parallel
from protocol.engine.vector.partition import VectorPartition, explore_vector_parallel
from protocol.model.next import model_for
from protocol.run import check, explore_config
from sweeps import SELECTED, sweep_constants
from test_signals import one_line, signalled


def counts(run) -> tuple:
    found = run.counts()
    return found.distinct_states, found.transitions, found.depth, run.complete


def paths(run) -> dict:
    """Each violated property's counterexample, as (label, readable state) steps."""
    return {name: run.counterexample(name) for name in sorted(run.violated())}


def partitioned(named, workers: int, kind, **options):
    """The run of `kind`'s partitions over `workers` forked processes, its paths read
    before the workers stop."""
    factory = partial(model_for, named.config)
    explore = explore_vector_parallel if kind is VectorPartition else explore_parallel
    run = explore(factory, workers, pool=ProcessPool(factory, workers, False, kind=kind), **options)
    try:
        return counts(run), paths(run)
    finally:
        run.close()


def sequential(named, engine="vector"):
    run = explore_config(named.config, engine=engine)
    return counts(run), {name: len(path) for name, path in paths(run).items()}


def lengths(found: dict) -> dict:
    return {name: len(path) for name, path in found.items()}


def test_two_vector_partitions_find_a_refutation_as_the_sequential_engine_does():
    named = lookup("HoldsCapReconnect").with_constants({"MaxTime": 1})
    result = check(named, workers=2, partitioned=True, liveness=False)
    assert result.engine == {"name": "vector"}
    one = sequential(named)
    assert (result.distinct_states, result.transitions, result.depth, result.complete) == one[0] == (115, 286, 9, True)
    assert result.violation("I1").length == one[1]["I1"] == named.expected_violations()["I1"] == 7


CASES = [("Holds", {"MaxTime": 1}), ("HoldsRouted", {"MaxTime": 1}), ("HoldsCutsUpper", {"MaxTime": 1}),
         ("HoldsAcquireFloorAgent", {"MaxTime": 1}), ("Holds", {"MaxTime": 2})]


@pytest.mark.slow
@pytest.mark.parametrize("name, constants", CASES, ids=[f"{name}-{c}" for name, c in CASES])
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_vector_partitions_find_what_the_sequential_engine_and_the_packed_partitions_find(name, constants, workers):
    named = lookup(name).with_constants(constants)
    found, vector_paths = partitioned(named, workers, VectorPartition)
    packed, packed_paths = partitioned(named, workers, Partition)
    assert found == packed == sequential(named)[0]
    assert lengths(vector_paths) == sequential(named)[1]
    assert vector_paths == packed_paths  # the same trace: the packed partitions' choice, whatever N


@pytest.mark.slow
@pytest.mark.parametrize("switches", SELECTED, ids=combination_id)
def test_two_vector_partitions_find_what_the_packed_ones_find_on_the_switch_sweeps(switches):
    # The sweeps (tests/sweeps.py: the 3-wise covering and the sample), at their whole constants (tests/test_sweep.py), liveness included:
    # two vector partitions and two packed ones give the same counts, verdicts, traces and
    # lassos; the sequential engine the same counts and verdicts (its traces may be other
    # shortest ones). Where the vector engine does not apply (a whole footprint), the packed
    # partitions against the sequential run.
    named = NamedConfig("sweep", Config(**sweep_constants(switches)[0], **switches))
    packed = summary(check(named, workers=2, partitioned=True, engine="packed"))
    one = summary(check(named))
    assert all(verdict[0] is not None for verdict in packed["verdicts"].values())  # liveness decided
    assert {key: packed[key] for key in ("counts", "verdicts")} == {key: one[key] for key in ("counts", "verdicts")}
    if vector.vector_refusal(model_for(named.config)) is None:
        assert summary(check(named, workers=2, partitioned=True, engine="vector")) == packed


def lowering_publish(s, cfg, p):
    """Publish, or where process p's since is above 0, lower it by one (breaks NoRegression)."""
    if s.since[p] > 0:
        return s._replace(since=replace_at(s.since, p, s.since[p] - 1))  # process p's entry alone (views.py)
    return actions.publish(s, cfg, p)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 3])
def test_a_violated_transition_property_has_the_packed_partitions_trace(monkeypatch, workers):
    replace_action(monkeypatch, "Publish", lowering_publish)
    named = lookup("Holds").with_constants({"MaxTime": 1})
    found, vector_paths = partitioned(named, workers, VectorPartition)
    packed, packed_paths = partitioned(named, workers, Partition)
    assert found == packed == sequential(named)[0]
    assert lengths(vector_paths) == sequential(named)[1] == {"NoRegression": 6, "PhysicalLeSince": 7}
    assert vector_paths == packed_paths


@pytest.mark.slow
@pytest.mark.parametrize("options", [{"max_states": 500}, {"max_states": 1}, {"stop_on_violation": True}])
def test_max_states_and_stop_on_violation_cut_where_the_packed_partitions_cut(options):
    named = lookup("HoldsRouted").with_constants({"MaxTime": 1})
    found, vector_paths = partitioned(named, 2, VectorPartition, **options)
    packed, packed_paths = partitioned(named, 2, Partition, **options)
    assert found == packed and found[3] is False
    assert vector_paths == packed_paths


def summary(result) -> dict:
    """What a check says, traces and lassos included."""
    return {"counts": (result.distinct_states, result.transitions, result.depth, result.complete),
            "verdicts": {name: (verdict.holds, verdict.trace_length, verdict.vacuous, verdict.premises)
                         for name, verdict in result.properties.items()},
            "traces": {name: ([(str(step.action), step.state) for step in verdict.trace.steps],
                              verdict.trace.loop, verdict.trace.stutters)
                       for name, verdict in result.properties.items() if verdict.trace is not None}}


def publish_that_spins(s, cfg, p):
    """Publish, staying put where it would raise since: the graph gets cycles."""
    return None if actions.publish(s, cfg, p) is None else s


def publish_blind_to_standing(s, cfg, p):
    """Publish reading every standing hold as 0: since never rises, compaction stalls."""
    after = actions.publish(s._replace(standing=(0,) * len(s.standing)), cfg, p)
    return None if after is None else after._replace(standing=s.standing)


LIVENESS = [("Holds", None), ("HoldsUnfair", None), ("Holds", publish_that_spins),
            ("Holds", publish_blind_to_standing)]


@pytest.mark.slow
@pytest.mark.parametrize("name, sabotage", LIVENESS, ids=["holds", "unfair", "cycle", "stutter"])
@pytest.mark.parametrize("workers", [2, 3])
def test_liveness_on_vector_partitions_gives_the_packed_partitions_verdicts_and_lassos(
        monkeypatch, name, sabotage, workers):
    if sabotage is not None:
        replace_action(monkeypatch, "Publish", sabotage)
    named = lookup(name).with_constants({"MaxTime": 1})
    vector_run = check(named, workers=workers, partitioned=True)
    packed_run = check(named, workers=workers, partitioned=True, engine="packed")
    one = check(named)
    assert vector_run.engine == {"name": "vector"} and packed_run.engine == {"name": "packed"}
    assert summary(vector_run) == summary(packed_run)
    assert summary(vector_run)["counts"] == summary(one)["counts"]
    assert summary(vector_run)["verdicts"] == summary(one)["verdicts"]
    assert vector_run.parallel["graph_gathered"]


@pytest.mark.slow
def test_a_whole_footprint_runs_on_the_vector_engine_with_workers_too():
    """A seal tap's Ingest (an each footprint) once sent every multi-worker run to the
    packed partitions; threads and vector partitions now run it, with the same graph."""
    named = lookup("HoldsSealTap").with_constants({"MaxTime": 1})
    threads = check(named, workers=2)
    partitions = check(named, workers=2, partitioned=True)
    one = check(named, engine="packed")
    assert threads.engine == partitions.engine == {"name": "vector"}
    assert summary(threads) == summary(one)
    assert summary(partitions)["counts"] == summary(one)["counts"]
    assert summary(partitions)["verdicts"] == summary(one)["verdicts"]


@pytest.mark.slow
def test_keys_wider_than_a_word_in_a_worker_fall_back_to_the_packed_partitions(monkeypatch):
    def too_wide(*args, **kwargs):
        raise vector.WideKeys("the keys need 65 bits")

    named = lookup("HoldsRouted").with_constants({"MaxTime": 1})
    monkeypatch.setattr(vector.KeyLayout, "fitting", classmethod(lambda cls, *a, **k: too_wide()))
    result = check(named, workers=2, liveness=False)
    assert result.engine == {"name": "packed", "why": "the keys need 65 bits"}
    assert result.violation("I1").length == 6
    with pytest.raises(ConfigError, match="--engine vector cannot check this: the keys need 65 bits"):
        check(named, workers=2, liveness=False, engine="vector")


@pytest.mark.slow
def test_a_failing_vector_worker_is_still_a_lost_worker(monkeypatch):
    def fails(self):
        raise RuntimeError("out of luck")

    monkeypatch.setattr(VectorPartition, "expand", fails)
    with pytest.raises(WorkerLost, match="out of luck"):
        check(lookup("Holds").with_constants({"MaxTime": 1}), workers=2, liveness=False, partitioned=True)


@pytest.mark.slow
def test_sigterm_ends_a_vector_partitioned_run_and_its_workers():
    code, out, err, stopping, alive = signalled(
        ["check", "Holds", "-c", "D=2", "-c", "MaxTime=3", "--no-liveness", "--workers", "2"], after=3.0)
    assert code == 143  # 128 + SIGTERM
    one_line(err, "interrupted (SIGTERM)")
    assert alive == [], f"{alive} still running one second after SIGTERM"
