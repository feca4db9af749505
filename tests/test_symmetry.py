"""Symmetry reduction: the same verdicts, shortest lengths, depth and unreduced
counts as the full search, on every named configuration it applies to, and
counterexamples that are real runs of the model."""

import itertools
import json

import pytest

from protocol import properties as props
from protocol.model.config import ConfigError
from protocol.configurations.named import named_configurations
from protocol.engine.fast import BITS, Engine, unreduced_counts
from protocol.run import explore_config
from protocol.run import check
from protocol.engine.symmetry import Reduction, canonicalizer
from protocol.model.next import model_for, replay
from test_fast import some_packed_states

# The model declares where processes are not interchangeable (the cap makes process 0 special).
SYMMETRIC = [name for name, named in named_configurations().items()
             if model_for(named.config).symmetry_refusal is None]
CONSTANTS = [{}, {"P": 3, "D": 1, "MaxTime": 1}]
# A configuration defined at one process (the manifest's constants) is one where symmetry
# reduces nothing: it is compared at two processes, and at MaxTime 1 (for the alias
# configurations, 40 thousand states, not millions).
ONE_PROCESS_CONSTANTS = {"P": 2, "MaxTime": 1}


def symmetric_cases(constants_list: list, ids: list) -> list:
    """(name, constants) for every symmetric configuration, one defined at one process
    at ONE_PROCESS_CONSTANTS."""
    cases = []
    for name in SYMMETRIC:
        if named_configurations()[name].config.P == 1:
            cases.append(pytest.param(name, ONE_PROCESS_CONSTANTS, id=f"{name}-P2-T1"))
        else:
            cases += [pytest.param(name, c, id=f"{name}-{i}") for c, i in zip(constants_list, ids)]
    return cases


@pytest.mark.parametrize("name, constants", symmetric_cases(CONSTANTS, ["defaults", "P3-D1-T1"]))
def test_reduction_keeps_verdicts_lengths_depth_and_unreduced_counts(name, constants):
    cfg = named_configurations()[name].config.evolve(**constants)
    full = explore_config(cfg)
    reduced = explore_config(cfg, symmetry=True)
    assert reduced.distinct_states < full.distinct_states
    assert unreduced_counts(reduced)["distinct_states"] == full.distinct_states
    assert unreduced_counts(reduced)["transitions"] == full.transitions
    assert reduced.depth == full.depth
    assert reduced.violations.keys() == full.violations.keys()
    for prop in full.violations:
        assert len(reduced.counterexample(prop)) == len(full.counterexample(prop))


# Liveness lassos under symmetry are replayed in test_a_reduced_lasso_is_a_real_run_that_stalls.
SAFETY_REFUTED = [n for n in SYMMETRIC
                  if named_configurations()[n].violates not in (None, *props.declared_names(props.LIVENESS))]


@pytest.mark.parametrize("name", SAFETY_REFUTED)
def test_reduced_counterexamples_are_real_runs_that_violate(name):
    # Breadth-first, the first violation found is a shortest one: no need to explore the rest.
    named = named_configurations()[name]
    cfg = named.config.evolve(P=3)
    run = explore_config(cfg, symmetry=True, stop_on_violation=True)
    first, length = min(named.expect, key=lambda expected: expected[1])  # the shortest is found first
    assert list(run.violations) == [first]
    trace = run.counterexample(first)
    assert len(trace) == length
    replayed = replay(cfg, [label for label, _ in trace[1:]])
    assert [step.state for step in replayed] == [state for _, state in trace]


def test_canonical_form_is_the_same_for_every_permutation():
    engine = Engine(model_for(named_configurations()["HoldsAcquire"].config.evolve(P=3)))
    canonical = canonicalizer(3, BITS)
    for packed in some_packed_states(engine, 500):
        g, local_ids = engine.unpack(packed)
        forms = {canonical(engine.pack(g, list(order))) for order in itertools.permutations(local_ids)}
        assert len(forms) == 1


def test_orbit_sizes():
    reduction = Reduction(3, BITS)
    pack = lambda ids: sum(lid << (p * BITS) for p, lid in enumerate(ids))  # noqa: E731
    assert [reduction.orbit_size(pack(ids)) for ids in ([1, 1, 1], [1, 1, 2], [1, 2, 3])] == [1, 3, 6]


def test_the_cap_refuses_symmetry():
    with pytest.raises(ConfigError, match="process 0 special"):
        explore_config(named_configurations()["HoldsCap"].config, symmetry=True)


def test_check_symmetry_on_the_command_line(capsys):
    from protocol.cli import main

    assert main(["check", "HoldsRouted", "--symmetry", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["distinct_states"] == explore_config(named_configurations()["HoldsRouted"].config).distinct_states
    assert record["reduced_states"] < record["distinct_states"]
    assert record["properties"]["I1"] == {"holds": False, "trace_length": 6}


def test_check_symmetry_refuses_the_cap(capsys):
    from protocol.cli import main

    assert main(["check", "HoldsCap", "--symmetry"]) == 2
    assert "process 0 special" in capsys.readouterr().err


# ------------------------------------------------------------------ liveness

LIVENESS_CONSTANTS = [{}, {"P": 3, "D": 1, "MaxTime": 1}]


def verdicts(result) -> dict:
    return {name: (verdict.holds, verdict.trace_length) for name, verdict in result.properties.items()}


@pytest.mark.parametrize("name, constants", symmetric_cases(LIVENESS_CONSTANTS, ["defaults", "P3-D1-T1"]))
def test_reduction_keeps_every_verdict_and_length_liveness_included(name, constants):
    named = named_configurations()[name].with_constants(constants)
    full, reduced = check(named), check(named, symmetry=True)
    assert "CompactionNotStalled" in reduced.properties
    assert verdicts(reduced) == verdicts(full)
    assert reduced.as_expected == full.as_expected


@pytest.mark.slow
@pytest.mark.parametrize("name", ["HoldsUnfair", "Holds"])
def test_reduction_keeps_the_liveness_verdict_on_wider_constants(name):
    # three processes and two indexes (280k states), beyond LIVENESS_CONSTANTS; MaxTime 1 keeps it quick
    named = named_configurations()[name].with_constants({"P": 3, "D": 2, "MaxTime": 1})
    full = check(named).properties["CompactionNotStalled"]
    reduced = check(named, symmetry=True).properties["CompactionNotStalled"]
    assert (reduced.holds, reduced.trace_length) == (full.holds, full.trace_length)


@pytest.mark.slow
@pytest.mark.parametrize("constants", [{}, {"P": 3}], ids=["P2", "P3"])
def test_a_reduced_lasso_is_a_real_run_that_stalls(constants):
    named = named_configurations()["HoldsUnfair"].with_constants(constants)
    trace = check(named, symmetry=True).violation("CompactionNotStalled")
    assert trace.length == 2 and trace.stutters
    states = [step.state for step in trace.steps]
    replayed = replay(named.config, [step.action for step in trace.steps[1:]])
    assert [step.state for step in replayed] == states
    assert states[-1].sent > min(states[-1].since)


def test_the_bench_measures_liveness_under_symmetry_with_the_unreduced_counts():
    from protocol.tools.bench import measure

    constants = {"P": 2, "D": 1, "MaxTime": 1}
    full, reduced = (measure("Holds", constants, mode, max_states=10**6)
                     for mode in ("safety+liveness", "symmetry+liveness"))
    assert reduced["as_expected"] is full["as_expected"] is True
    assert (reduced["distinct_states"], reduced["transitions"]) == (full["distinct_states"], full["transitions"])
    assert reduced["reduced_states"] < full["distinct_states"]


@pytest.mark.parametrize("engine", ["packed", "vector"])
def test_a_reduced_cycle_where_a_stall_may_lie_is_refused_in_one_line(monkeypatch, capsys, engine):
    # The protocol's graphs are acyclic, so the refusal is provoked here; the detection
    # itself is tested on a toy with cycles (test_liveness.py, test_vector_symmetry.py).
    import protocol.engine.liveness
    from protocol.cli import main
    from protocol.engine.liveness import QuotientCycle
    from protocol.engine.vector.liveness import VectorGraph

    def cyclic(*_):
        raise QuotientCycle("a stalled region of the reduced graph has a cycle")

    monkeypatch.setattr(protocol.engine.liveness, "find_violation_reduced", cyclic)
    monkeypatch.setattr(VectorGraph, "find_violation_reduced", cyclic)
    assert main(["check", "HoldsRouted", "--symmetry", "--engine", engine]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "drop --symmetry" in error and "cycle" in error
    assert main(["check", "HoldsRouted", "--symmetry", "--no-liveness", "--json", "--engine", engine]) == 0


def test_no_liveness_checks_safety_alone_and_refuses_a_liveness_expectation(capsys):
    from protocol.cli import main

    assert main(["check", "Holds", "--symmetry", "--no-liveness", "--json"]) == 0
    assert "CompactionNotStalled" not in json.loads(capsys.readouterr().out)["properties"]
    assert main(["check", "HoldsUnfair", "--no-liveness"]) == 2
    assert "drop --no-liveness" in capsys.readouterr().err


@pytest.mark.parametrize("P", [2, 3])
def test_each_reduced_edge_names_the_permutation_that_gives_the_representative(P):
    from protocol.engine.symmetry import Permutations, edge_canonicalizer, renamed_packed

    engine = Engine(model_for(named_configurations()["HoldsAcquire"].config.evolve(P=P)))
    perms = Permutations(P)
    canonical_edge, canonical = edge_canonicalizer(perms, BITS), canonicalizer(P, BITS)
    for packed in some_packed_states(engine, 300):
        g, local_ids = engine.unpack(packed)
        for order in itertools.permutations(local_ids):
            s = engine.pack(g, list(order))
            extended, representative = canonical_edge(5, s)
            action, k = perms.split(extended)
            assert action == 5 and representative == canonical(s)
            assert renamed_packed(engine, s, perms.renames[k]) == representative
