"""Fingerprints: the table of 64-bit fingerprints, the fingerprint function, and a
fingerprinted search that gives the very counts, depth, verdicts and traces of
the full one, on toy models and on every named configuration."""

import functools
import json
import os
import random
import subprocess
import sys

import pytest

from protocol import properties as props
from protocol.engine.checker import explore, explore_fingerprinted
from protocol.model.config import ConfigError
from protocol.configurations.named import lookup, named_configurations
from protocol.run import explore_config
from protocol.engine.fingerprints import (
    FingerprintSet,
    actual_collision_probability,
    fingerprint_int,
    fingerprint_repr,
    min_gap,
    optimistic_collision_probability,
)
from protocol.run import check
from helpers import cli  # noqa: F401  (a fixture)
from test_checker import IDLE, counter, mutex, mutual_exclusion

NAMES = list(named_configurations())
SAFETY = [name for name in NAMES
          if not set(lookup(name).expected_violations()) & set(props.declared_names(props.LIVENESS))]

# ------------------------------------------------------------------ the table


def test_add_says_whether_new_and_contains_finds_only_what_was_added():
    seen = FingerprintSet()
    assert seen.add(12345)
    assert not seen.add(12345)
    assert 12345 in seen
    assert 54321 not in seen
    assert len(seen) == 1


def test_the_table_doubles_past_its_load_and_keeps_every_fingerprint():
    rng = random.Random(6)
    seen = FingerprintSet(capacity=4, max_load=0.5)
    values = {rng.getrandbits(64) or 1 for _ in range(5_000)}
    for value in values:
        assert seen.add(value)
    assert len(seen) == len(values)
    assert seen.capacity >= 2 * len(values)  # never fuller than max_load
    assert all(value in seen for value in values)
    assert all(not seen.add(value) for value in values)


def test_clustered_fingerprints_probe_past_each_other():
    seen = FingerprintSet(capacity=16)
    same_home = [(5 << 60) | low for low in range(1, 10)]  # one home slot for all nine
    for value in same_home:
        assert seen.add(value)
    assert all(value in seen for value in same_home)
    assert (6 << 60) not in seen


def test_zero_is_the_empty_slot_so_a_zero_fingerprint_is_stored_as_one():
    seen = FingerprintSet()
    assert 0 not in seen
    assert seen.add(0)
    assert 0 in seen and 1 in seen
    assert not seen.add(1)
    assert len(seen) == 1


def test_sorted_fingerprints_even_when_a_run_wraps_past_the_end():
    seen = FingerprintSet(capacity=16)
    top = (1 << 64) - 1
    values = [top, top - 1, top - 2, 5, top - 3, 1 << 59]  # the top ones wrap to slot 0 on
    for value in values:
        seen.add(value)
    assert list(seen.sorted_fingerprints()) == sorted(values)


def test_sorted_fingerprints_on_random_growth():
    rng = random.Random(7)
    seen = FingerprintSet(capacity=2)
    values = {rng.getrandbits(64) or 1 for _ in range(3_000)}
    for value in values:
        seen.add(value)
    assert list(seen.sorted_fingerprints()) == sorted(values)


def test_bad_table_shapes_are_refused():
    with pytest.raises(ValueError, match="power of two"):
        FingerprintSet(capacity=12)
    with pytest.raises(ValueError, match="max_load"):
        FingerprintSet(max_load=1.0)


# ------------------------------------------------------ fingerprints, probabilities


FINGERPRINT_SCRIPT = """
import json
from protocol.engine.fingerprints import fingerprint_int, fingerprint_repr
print(json.dumps([fingerprint_int(x) for x in (0, 1, -1, 2**64, 2**72 + 12345, 3**90)]
                 + [fingerprint_repr(("idle", ("a", 1), frozenset()))]))
"""


def test_fingerprints_are_the_same_whatever_the_hash_seed():
    outputs = set()
    for seed in ("0", "1", "4242", "random"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", FINGERPRINT_SCRIPT], capture_output=True,
                              text=True, check=True, env=env)
        outputs.add(done.stdout)
    assert len(outputs) == 1
    here = json.loads(outputs.pop())
    assert here[1] == fingerprint_int(1)
    assert here[-1] == fingerprint_repr(("idle", ("a", 1), frozenset()))


def test_fingerprints_are_64_bit_nonzero_and_distinct_on_nearby_ints():
    near = [(1 << 48) * 7 + i for i in range(10_000)] + [i << 64 for i in range(1, 1_000)]
    prints = [fingerprint_int(x) for x in near]
    assert len(set(prints)) == len(near)
    assert all(0 < fp < 1 << 64 for fp in prints)
    assert fingerprint_int(5) != fingerprint_int(-5)
    assert fingerprint_int(2**64) != fingerprint_int(1)  # the high limb counts


def test_fingerprint_bits_look_uniform():
    prints = [fingerprint_int(x) for x in range(20_000)]
    for bit in (0, 17, 31, 48, 63):
        ones = sum((fp >> bit) & 1 for fp in prints)
        assert 9_500 < ones < 10_500, bit


def test_collision_probability_estimates():
    n, m = 595_210, 595_210 + 2_727_892
    assert optimistic_collision_probability(n, m) == pytest.approx(n * (m - n) / 2**64)
    assert optimistic_collision_probability(10, 10) == 0
    seen = FingerprintSet()
    for fp in (100, 10, 1 << 63, 15, 40):
        seen.add(fp)
    assert min_gap(seen.sorted_fingerprints()) == 5
    assert actual_collision_probability(seen) == pytest.approx(1 / 5)
    assert actual_collision_probability(FingerprintSet()) == 0


# ------------------------------------------------------------- toy models


def assert_same_search(full, printed):
    assert (printed.distinct_states, printed.transitions, printed.depth, printed.complete) == (
        full.distinct_states, full.transitions, full.depth, full.complete)
    assert printed.expanded == full.expanded
    assert list(printed.parent) == list(full.parent)
    assert printed.violations.keys() == full.violations.keys()
    for prop in full.violations:
        assert printed.counterexample(prop) == full.counterexample(prop)
    assert printed.generated == printed.transitions + len(printed.initial)


TOYS = {
    "counter": ([0], counter(9), {"below 4": lambda n: n < 4}, {"never down": lambda a, b: b >= a}),
    "mutex": ([(IDLE, IDLE)], mutex(locked=False), {"MutualExclusion": mutual_exclusion}, {}),
}


@pytest.mark.parametrize("toy", TOYS)
@pytest.mark.parametrize("options", [{}, {"max_states": 5}, {"stop_on_violation": True}],
                         ids=["whole", "cut", "stop"])
def test_a_toy_model_searched_by_fingerprint_is_the_same_search(toy, options):
    initial, successors, state_props, step_props = TOYS[toy]
    full = explore(initial, successors, state_props, step_props, **options)
    printed = explore_fingerprinted(initial, successors, state_props, step_props,
                                    fingerprint=fingerprint_repr, **options)
    assert_same_search(full, printed)
    for state_id in range(full.distinct_states):
        assert printed.path(state_id) == full.path(state_id)


def test_replay_follows_the_step_position_when_labels_repeat():
    def twice(n):  # two steps with one label: only their position tells them apart
        return [("Step", n + 1), ("Step", n + 2)] if n < 6 else []

    full = explore([0], twice, {"below 5": lambda n: n < 5})
    printed = explore_fingerprinted([0], twice, {"below 5": lambda n: n < 5}, fingerprint=fingerprint_repr)
    assert printed.counterexample("below 5") == full.counterexample("below 5") == [
        (None, 0), ("Step", 1), ("Step", 3), ("Step", 5)]  # 1 -> 3 and 3 -> 5 are second steps


def test_a_fingerprint_collision_loses_a_state_which_is_why_its_chance_is_reported():
    collide = lambda n: 7 if n in (3, 4) else n + 100  # noqa: E731  (3 and 4 share a fingerprint)
    printed = explore_fingerprinted([0], counter(6), fingerprint=collide)
    assert printed.distinct_states == explore([0], counter(6)).distinct_states - 3  # 4, 5, 6 unseen
    assert printed.collision_probability()["optimistic"] > 0


def test_weigh_sums_over_the_states_admitted_and_edges_are_refused():
    printed = explore_fingerprinted([0], counter(5), fingerprint=fingerprint_repr, weigh=lambda n: n)
    assert printed.weight == sum(range(6))
    with pytest.raises(ValueError, match="no edges"):
        explore_fingerprinted([0], counter(5), fingerprint=fingerprint_repr, record_edges=True)


# ------------------------------------------------------ the named configurations


@pytest.mark.parametrize("name", NAMES)
def test_every_named_configuration_gives_the_same_search(name):
    cfg = lookup(name).config
    assert_same_search(explore_config(cfg), explore_config(cfg, fingerprints=True))


@pytest.mark.parametrize("name", SAFETY)
def test_every_safety_configuration_gives_the_same_verdicts_and_traces(name):
    named = lookup(name)
    full, printed = check(named, liveness=False), check(named, liveness=False, fingerprints=True)
    assert (printed.distinct_states, printed.transitions, printed.depth, printed.complete) == (
        full.distinct_states, full.transitions, full.depth, full.complete)
    for prop, verdict in printed.properties.items():
        assert verdict == full.properties[prop]  # the verdict and the very same trace
    assert set(full.properties) - set(printed.properties) <= {"CompactionNotStalled"}
    assert 0 < printed.fingerprint_collision["optimistic"] < 1e-6
    assert 0 < printed.fingerprint_collision["actual"] < 1e-6
    assert full.fingerprint_collision is None


@pytest.mark.parametrize("name", ["Holds", "HoldsRouted"])
def test_every_state_replays_to_the_state_the_full_search_stored(name):
    cfg = lookup(name).config
    full, printed = explore_config(cfg), explore_config(cfg, fingerprints=True)
    assert_same_search(full, printed)
    assert all(printed.state(i) == full.state(i) for i in range(0, full.distinct_states, 97))


@pytest.mark.slow
def test_every_refutation_with_stop_on_violation_and_a_cut():
    for name in [n for n in SAFETY if lookup(n).expected_violation()]:
        cfg = lookup(name).config
        for options in ({"stop_on_violation": True}, {"max_states": 500}):
            assert_same_search(explore_config(cfg, **options),
                               explore_config(cfg, fingerprints=True, **options))


@pytest.mark.parametrize("name", [n for n in SAFETY if not lookup(n).config.cap])
def test_symmetry_with_fingerprints_gives_the_symmetry_counts(name):
    named = lookup(name)
    reduced = check(named, liveness=False, symmetry=True)
    printed = check(named, liveness=False, symmetry=True, fingerprints=True)
    assert (printed.distinct_states, printed.reduced_states, printed.transitions, printed.depth) == (
        reduced.distinct_states, reduced.reduced_states, reduced.transitions, reduced.depth)
    assert printed.properties == {prop: reduced.properties[prop] for prop in printed.properties}


def test_liveness_with_fingerprints_is_refused():
    with pytest.raises(ConfigError, match="--fingerprints checks safety only; add --no-liveness"):
        check(lookup("Holds"), fingerprints=True)
    with pytest.raises(ConfigError, match="HoldsUnfair must violate CompactionNotStalled"):
        check(lookup("HoldsUnfair"), fingerprints=True, liveness=False)


# ------------------------------------------------------------------ the CLI


def run_protocol(*argv):
    return subprocess.run([sys.executable, "-m", "protocol", *argv], capture_output=True, text=True,
                          timeout=300)


@functools.lru_cache(maxsize=None)
def has_no_liveness() -> bool:
    return "--no-liveness" in run_protocol("check", "--help").stdout  # a process each time: asked once


def safety_only() -> list[str]:
    """`--no-liveness` where `check` has it (then --fingerprints needs it), else nothing."""
    return ["--no-liveness"] if has_no_liveness() else []


@pytest.mark.slow
def test_cli_json_adds_the_collision_probability_only_with_fingerprints():
    printed = run_protocol("check", "HoldsRouted", *safety_only(), "--fingerprints", "--json")
    plain = run_protocol("check", "HoldsRouted", *safety_only(), "--json")
    assert printed.returncode == 0, printed.stderr
    with_fp, without = json.loads(printed.stdout), json.loads(plain.stdout)
    assert set(with_fp) - set(without) == {"fingerprint_collision_probability"}
    assert set(with_fp["fingerprint_collision_probability"]) == {"optimistic", "actual"}
    for key in ("distinct_states", "transitions", "depth"):
        assert with_fp[key] == without[key]
    assert with_fp["properties"]["I1"] == without["properties"]["I1"]


@pytest.mark.slow
def test_cli_summary_shows_the_collision_probability():
    done = run_protocol("check", "Holds", *safety_only(), "--fingerprints", "--no-trace")
    assert done.returncode == 0, done.stderr
    # the label wraps in its 18-column cell: "fingerprint / collision / probability"
    assert all(word in done.stdout for word in ("fingerprint", "collision", "probability", "(optimistic)"))


@pytest.mark.parametrize("argv", [["HoldsUnfair"], ["HoldsUnfair", "--no-liveness"], ["Holds"]], ids=" ".join)
def test_the_cli_refuses_fingerprints_with_liveness_in_one_line_in_process(cli, argv):
    code, _, err = cli("check", "--fingerprints", *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "--fingerprints" in err or "must violate" in err


@pytest.mark.slow  # the same, a process each (the quick run has one in tests/test_cli.py)
def test_cli_refuses_fingerprints_with_liveness_in_one_line():
    for argv in (["HoldsUnfair"], ["HoldsUnfair", *safety_only()]) + ((["Holds"],) if safety_only() else ()):
        done = run_protocol("check", "--fingerprints", *argv)
        assert done.returncode == 2, argv
        assert len(done.stderr.strip().splitlines()) == 1
        assert "Traceback" not in done.stderr
        assert "--fingerprints" in done.stderr or "must violate" in done.stderr
