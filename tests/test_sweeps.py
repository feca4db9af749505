"""The switch sweeps' budget (tests/sweeps.py): the coverings show every pair and every
triple of switch values that a valid combination shows, the sample has its fixed size and
is the seed's, and a new switch value adds a few tests to the slow run, not a product."""

from __future__ import annotations

import importlib
import itertools
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

import sweeps
from sweeps import SAMPLE, covering, seeded_sample, value_tuples


@st.composite
def switch_spaces(draw):
    """Some switches (two to four values each) and a random subset of their product: the
    valid combinations of a made-up model."""
    sizes = draw(st.lists(st.integers(2, 4), min_size=3, max_size=6))
    product = [dict(zip(map("s{}".format, range(len(sizes))), values))
               for values in itertools.product(*(range(size) for size in sizes))]
    return [switches for switches in product if draw(st.integers(0, 3))]  # about a quarter refused


def shown(combinations: list[dict], strength: int) -> set:
    return set().union(set(), *(value_tuples(switches, strength) for switches in combinations))


@given(switch_spaces(), st.sampled_from([2, 3]))
def test_a_covering_shows_every_tuple_the_valid_combinations_show(every, strength):
    chosen = covering(every, strength)
    assert shown(chosen, strength) == shown(every, strength)
    assert all(switches in every for switches in chosen)
    assert len(set(map(str, chosen))) == len(chosen)  # each picked once


@given(switch_spaces())
def test_a_3_wise_covering_after_a_pairwise_one_adds_only_what_the_triples_need(every):
    pairs = covering(every, 2)
    triples = covering(every, 3, pairs)
    assert shown(pairs + triples, 3) == shown(every, 3)
    assert not [switches for switches in triples if switches in pairs]


def test_a_covering_can_fail_to_cover():
    # The check above would notice a covering that leaves a triple out.
    every = [dict(a=a, b=b, c=c) for a in (0, 1) for b in (0, 1) for c in (0, 1)]
    assert shown(every[:-1], 3) != shown(every, 3)
    assert covering(every, 3) and shown(covering(every, 3), 3) == shown(every, 3)


def test_each_sweep_run_shows_every_triple_of_its_switch_values():
    if sweeps.COMPLETE:
        assert len(sweeps.SELECTED) == sum(map(len, sweeps.SWEEPS))
    for every in sweeps.SWEEPS:
        chosen = [switches for switches in sweeps.QUICK + sweeps.TRIPLES if switches in every]
        assert shown(chosen, 3) == shown(every, 3)
        assert shown([s for s in sweeps.QUICK if s in every], 2) == shown(every, 2)
    assert len(set(map(str, sweeps.SELECTED))) == len(sweeps.SELECTED)


def test_the_sample_has_its_fixed_size_and_is_the_seeds():
    if sweeps.COMPLETE:
        pytest.skip("PROTOCOL_SWEEP=complete: every combination, no sample")
    assert len(sweeps.SAMPLED) == SAMPLE
    assert len(sweeps.SLOW) == len(sweeps.TRIPLES) + SAMPLE
    assert sweeps.budget(sweeps.SWEEPS, SAMPLE, sweeps.SEED) == (sweeps.QUICK, sweeps.TRIPLES, sweeps.SAMPLED)
    rest = [s for every in sweeps.SWEEPS for s in every if s not in sweeps.QUICK + sweeps.TRIPLES]
    assert seeded_sample(rest, SAMPLE, sweeps.SEED) == sweeps.SAMPLED
    assert seeded_sample(rest, SAMPLE, sweeps.SEED + 1) != sweeps.SAMPLED  # another seed, another sample


def test_the_seed_is_the_sessions_and_printed(pytestconfig):
    import os

    assert os.environ[sweeps.SEED_VARIABLE] == str(sweeps.SEED)
    assert f"seed {sweeps.SEED}" in sweeps.describe() or sweeps.COMPLETE


# ------------------------------------------------------------ the budget's growth


def sweep_parametrizations() -> dict:
    """For each list of tests/sweeps.py (QUICK, SLOW, SELECTED), how many slow tests are
    parametrized over it, read from the test modules' own marks."""
    lists = {"QUICK": sweeps.QUICK, "SLOW": sweeps.SLOW, "SELECTED": sweeps.SELECTED}
    uses = dict.fromkeys(lists, 0)
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        module = importlib.import_module(path.stem)  # imported already where pytest collected it
        for function in vars(module).values():
            marks = getattr(function, "pytestmark", [])
            if not any(mark.name == "slow" for mark in marks):
                continue
            for mark in marks:
                for name, chosen in lists.items():
                    if mark.name == "parametrize" and mark.args[1] is chosen:
                        uses[name] += 1
    return uses


def slow_sweep_tests(sweep_lists: tuple, uses: dict) -> int:
    quick, triples, sampled = sweep_lists
    sizes = {"QUICK": len(quick), "SLOW": len(triples) + len(sampled),
             "SELECTED": len(quick) + len(triples) + len(sampled)}
    return sum(sizes[name] * count for name, count in uses.items())


def with_dummy_switch(every: list[dict], values: int) -> list[dict]:
    return [{**switches, "dummy": value} for switches in every for value in range(values)]


def test_the_slow_sweeps_are_found():
    uses = sweep_parametrizations()
    assert uses["SLOW"] >= 1 and uses["SELECTED"] >= 3  # test_sweep, test_vector_parallel, test_vector_symmetry


# Two and four values in the quick run (a covering of the grown sweeps costs about 0.1 CPU
# second per value), three in the slow run.
@pytest.mark.parametrize("values", [2, pytest.param(3, marks=pytest.mark.slow), 4])
def test_a_new_switch_adds_a_few_dozen_slow_tests_per_value_not_a_product(values):
    # A dummy switch of `values` values, always valid, added to both sweeps: the complete
    # product would multiply the slow sweeps by `values`; the budget adds what the
    # coverings need, at most 20 slow tests per value and sweep.
    uses = sweep_parametrizations()
    grown = [with_dummy_switch(every, values) for every in sweeps.SWEEPS]
    added = slow_sweep_tests(sweeps.budget(grown, SAMPLE, 1), uses) - slow_sweep_tests(
        sweeps.budget(sweeps.SWEEPS, SAMPLE, 1), uses)
    assert 0 <= added <= 20 * values * len(grown), added
    product = slow_sweep_tests(sweeps.complete(grown), uses) - slow_sweep_tests(sweeps.complete(sweeps.SWEEPS), uses)
    assert product >= (values - 1) * 1000  # what the complete product would add
