"""The partitioned search (engine/parallel.py), its Ray transport and the swarm
simulation: the same counts, depths, verdicts and shortest lengths as the
sequential search, traces that do not depend on the number of workers, and a
worker that dies stops the run without a verdict."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from functools import cache, partial
from pathlib import Path

import pytest

from helpers import cli, ctrl_c_reaches_it, publish_blind_to_standing, replace_action  # noqa: F401  (cli: a fixture)

from protocol.model import actions
from protocol.configurations.named import lookup, named_configurations
from protocol.engine.partitioned.search import Partition, ProcessPool, WorkerLost, canonical, explore_parallel, fingerprint
from protocol.model.next import model_for
from protocol.run import check
from protocol.tools.simulate import simulate_swarm

ROOT = Path(__file__).resolve().parent.parent
NAMES = list(named_configurations())


def summary(result) -> dict:
    """What must not depend on the number of workers."""
    return {
        "distinct_states": result.distinct_states,
        "transitions": result.transitions,
        "depth": result.depth,
        "complete": result.complete,
        "verdicts": {name: (verdict.holds, verdict.trace_length) for name, verdict in result.properties.items()},
        "as_expected": result.as_expected,
    }


@cache
def sequential_summary(name: str) -> dict:
    """One sequential check per named configuration, shared by the tests that compare with it."""
    return summary(check(lookup(name)))


def traces(result) -> dict:
    return {name: [(str(step.action), step.state) for step in verdict.trace.steps]
            for name, verdict in result.properties.items() if verdict.trace is not None}


# In the quick run: a refutation, the section 12 model and a design that holds with liveness;
# the slow run takes every named configuration.
QUICK_PARALLEL = ("HoldsRouted", "TlaHolds", "HoldsCapReconnect")


@pytest.mark.parametrize("name", [name if name in QUICK_PARALLEL else pytest.param(name, marks=pytest.mark.slow)
                                  for name in NAMES])
def test_two_and_three_workers_find_what_one_finds(name):
    named = lookup(name).with_constants({"MaxTime": 1})
    one = check(named)
    two, three = check(named, workers=2, partitioned=True), check(named, workers=3, partitioned=True)
    assert summary(two) == summary(one)
    assert summary(three) == summary(one)
    assert traces(two) == traces(three)  # the chosen trace (a lasso's too) does not depend on N


def test_a_violated_invariant_has_its_shortest_trace_in_parallel():
    named = lookup("HoldsRouted")
    result = check(named, workers=2, liveness=False)
    trace = result.violation("I1")
    assert trace is not None and trace.length == named.expected_violations()["I1"]
    assert trace.steps[0].action is None and all(step.action is not None for step in trace.steps[1:])


def test_liveness_that_holds_is_decided_where_the_edges_lie():
    result = check(lookup("Holds").with_constants({"MaxTime": 1}), workers=2, engine="packed")
    assert result.properties["CompactionNotStalled"].holds is True
    assert result.parallel["graph_gathered"] is False


def publish_that_spins(s, cfg, p):
    """Publish, staying put where it would raise since: a step from a state to itself,
    so the graph has cycles (the protocol's own graphs have none)."""
    return None if actions.publish(s, cfg, p) is None else s


@pytest.mark.parametrize("sabotage, stutters", [(publish_that_spins, False), (publish_blind_to_standing, True)],
                         ids=["cycle", "stutter"])
def test_a_stall_that_might_exist_gathers_the_graph_and_finds_the_same_lasso(monkeypatch, sabotage, stutters):
    """A fair cycle (Publish taken forever, going nowhere) or a stutter where compaction
    waits: deciding in place must not say it holds; the gathered graph gives the
    sequential verdict and length, and the lasso does not depend on N."""
    replace_action(monkeypatch, "Publish", sabotage)
    named = lookup("Holds").with_constants({"MaxTime": 1})
    one, two, three = check(named), check(named, workers=2, partitioned=True), check(named, workers=3, partitioned=True)
    verdict = one.properties["CompactionNotStalled"]
    assert verdict.holds is False and verdict.trace.stutters is stutters
    assert summary(two) == summary(one) and summary(three) == summary(one)
    assert traces(two) == traces(three)
    assert two.parallel["graph_gathered"] and three.parallel["graph_gathered"]


def test_canonical_bytes_do_not_depend_on_how_a_set_was_built():
    built_up = frozenset([("Drop", 0), ("Create", 1, 2), 3])
    other_order = frozenset([3, ("Create", 1, 2), ("Drop", 0)])
    assert canonical(built_up) == canonical(other_order)
    assert fingerprint(built_up) == fingerprint(other_order)
    assert canonical((1, None, True)) != canonical((1, None, 1))  # a bool is not its int
    with pytest.raises(TypeError, match="no canonical encoding"):
        canonical(object())


def test_a_killed_worker_stops_the_search_naming_it():
    factory = partial(model_for, lookup("Holds").with_constants({"MaxTime": 1}).config)
    pool = ProcessPool(factory, 2, record_edges=False)
    victim = pool.processes[1]
    os.kill(victim.pid, signal.SIGKILL)
    victim.join()
    with pytest.raises(WorkerLost, match=rf"worker 1 \(pid {victim.pid}\) died \(killed by signal 9\)"):
        explore_parallel(factory, 2, pool=pool)
    assert not any(process.is_alive() for process in pool.processes)


def run_cli(*argv, timeout=300):
    return subprocess.run([sys.executable, "-m", "protocol", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, PYTHONPATH=str(ROOT)))


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_the_cli_gives_the_same_json_with_two_workers(cli):
    argv = ["check", "HoldsRouted", "-c", "MaxTime=1", "--json", "--workers"]
    code, out, err = cli(*argv, "1")  # in this process: the real run is the partitioned one
    assert code == 0, err
    done = run_cli(*argv, "2")
    assert done.returncode == 0, done.stderr
    records = [json.loads(out), json.loads(done.stdout)]
    for record in records:
        record.pop("seconds")
    # which engine ran: the vector one, alone and partitioned (engine/vector_partition.py)
    assert records[0].pop("engine") == records[1].pop("engine") == {"name": "vector"}
    levels = records[1].pop("level_sizes")  # only a partitioned search counts per level
    assert sum(levels) == records[1]["distinct_states"] and len(levels) == records[1]["depth"]
    assert records[0] == records[1]


BAD_WORKER_OPTIONS = [
    (["--workers", "0"], "out of range"),
    (["--workers", "many"], "not a whole number"),
    (["--workers", "2", "--symmetry"], "--symmetry is sequential only"),
    (["--workers", "2", "--fingerprints", "--no-liveness"], "--fingerprints is sequential only"),
]


@pytest.mark.parametrize("argv, words", BAD_WORKER_OPTIONS)
def test_bad_worker_options_are_one_usage_line(cli, argv, words):
    code, out, err = cli("check", "Holds", *argv)
    assert code == 2
    assert words in err and len(err.strip().splitlines()) == 1
    assert out == ""


# The same in a process of its own (no traceback on the way out either): one quick, the rest slow.
@pytest.mark.parametrize("argv, words", [BAD_WORKER_OPTIONS[0]] + [
    pytest.param(*bad, marks=pytest.mark.slow) for bad in BAD_WORKER_OPTIONS[1:]])
def test_bad_worker_options_are_one_usage_line_in_a_real_run(argv, words):
    done = run_cli("check", "Holds", *argv)
    assert done.returncode == 2
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""


def test_the_swarm_does_not_depend_on_the_number_of_workers():
    named = lookup("HoldsRouted")
    two = simulate_swarm(named, walks=60, depth=30, seed=7, workers=2)
    three = simulate_swarm(named, walks=60, depth=30, seed=7, workers=3)
    assert (two.steps, two.distinct_states) == (three.steps, three.distinct_states)
    assert {name: (f.trace, f.first_walk, f.walks) for name, f in two.findings.items()} == \
        {name: (f.trace, f.first_walk, f.walks) for name, f in three.findings.items()}
    assert "I1" in two.findings  # the walks do refute HoldsRouted


# ------------------------------------------------------------------ slow


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(child) for child in text]
    return found


@pytest.mark.slow
@pytest.mark.serial
def test_a_worker_killed_during_a_cli_run_is_one_line_and_exit_4():
    # 9.7 million states: still searching 3 s after the workers start (the packed engine's
    # partitions: the vector engine's --workers are threads)
    process = subprocess.Popen([sys.executable, "-m", "protocol", "check", "Holds", "-c", "D=2", "-c", "MaxTime=3",
                                "--workers", "2", "--engine", "packed"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, PYTHONPATH=str(ROOT)))
    deadline = time.monotonic() + 60
    workers = []
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
        workers = children(process.pid)
    assert len(workers) == 2, "the workers never started"
    time.sleep(3)  # well into the search
    os.kill(workers[1], signal.SIGKILL)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 4  # the environment: a lost worker
    assert len(err.strip().splitlines()) == 1 and "worker 1" in err and "died" in err
    assert "holds" not in out and "violated" not in out


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_named_configuration_at_its_own_constants_in_parallel(name):
    """Two workers (the owner by XOR) and three (by sum mod N, more workers than this
    machine's cores), in one test so that they share the sequential run."""
    for workers in (2, 3):
        assert summary(check(lookup(name), workers=workers, partitioned=True)) == sequential_summary(name), workers


@pytest.mark.slow  # with the cluster tests: CI installs Ray for the slow run only
def test_no_partition_method_is_shadowed_by_a_ray_actor_attribute():
    """Ray builds an actor class from Partition and overwrites what they share (a method
    once named `_remote` was replaced by Ray's, with only a warning)."""
    actor = pytest.importorskip("ray.actor", reason="Ray is not installed: pip install '.[cluster]' to run this")
    from protocol.engine.vector.partition import VectorPartition

    ours = {name for partition in (Partition, VectorPartition)  # the packed and the vector engine's
            for cls in partition.__mro__[:-1] for name in vars(cls)  # its mixins' methods too
            if not (name.startswith("__") and name.endswith("__"))}
    assert not ours & set(dir(actor.ActorClass))


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install '.[cluster]' to run these")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    yield ray
    ray.shutdown()


@pytest.mark.slow
@pytest.mark.serial
def test_a_local_ray_cluster_of_two_finds_what_one_process_finds(local_ray):
    for name in NAMES:
        assert summary(check(lookup(name), cluster="local", workers=2)) == sequential_summary(name), name


@pytest.mark.slow
@pytest.mark.serial
def test_ctrl_c_stops_a_partitioned_run_without_a_verdict():
    # big enough that five seconds in, the workers are still exploring (at MaxTime=3, 9.7 million
    # states, the vector engine's threads had sometimes decided safety by then)
    argv = ["check", "Holds", "-c", "P=2", "-c", "D=2", "-c", "MaxTime=4", "--workers", "2", "--json"]
    process = subprocess.Popen([sys.executable, "-m", "protocol", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                               preexec_fn=ctrl_c_reaches_it)
    time.sleep(5)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130  # 128 + SIGINT
    assert "interrupted" in err and len(err.strip().splitlines()) == 1
    record = json.loads(out)
    assert record["complete"] is False
    assert all(verdict["holds"] is None for verdict in record["properties"].values())
