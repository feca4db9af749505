"""The switch sweeps, with a budget: which combinations of the switches the engines are
compared on.

Every valid combination (the product of the switch values, less what spec 10.1 and
11.1 refuse) grows as a product: one three-valued switch doubles it. So a run compares
the engines on a covering instead. The quick run takes a pairwise covering (every pair
of switch values that any valid combination shows, together in one combination); the
slow run adds what a 3-wise covering needs beyond it (every triple), and a seeded
sample of SAMPLE more combinations, a fresh seed each run, printed in the session's
header (PROTOCOL_SWEEP_SEED=N reruns that sample). A new switch value adds a few
combinations to the coverings, not a product; the sample's size is fixed.

PROTOCOL_SWEEP=complete (a release check) runs every valid combination instead of the
covering and the sample: the quick run's pairwise ones there, the rest in the slow run.

Three sweeps: the switches of sections 2 and 10 with section 11's and 12's at their
defaults; every valid combination of section 11's switches (with physical compaction,
whose from_cuts they bring, and the alias, which seal_alias needs) on the shipped design;
and section 12's switches (the design's TLA+ abstractions) with those they change the
meaning of (where compaction goes and what bounds the publisher, the cap's Forward, the
reports that free a hold, a second index).
Fairness changes no state or edge, only which cycles are fair: each comparison decides
liveness under both of its values, so it is no sweep's switch.
"""

from __future__ import annotations

import heapq
import itertools
import os
import random

from helpers import switch_values
from protocol.model.config import SWITCHES as SWITCHES_DECLARED, Config, ConfigError

SAMPLE = 16  # the seeded sample's size per run, over both sweeps together
SEED_VARIABLE, MODE_VARIABLE = "PROTOCOL_SWEEP_SEED", "PROTOCOL_SWEEP"


# ------------------------------------------------------------ coverings


def valid_combinations(values_of: dict, base: dict | None = None) -> list[dict]:
    """Every combination of `values_of` (switch -> its values) that makes a Config (spec 10.1
    and 11.1 refuse some), with the switches of `base` set as it says."""
    found = []
    for values in itertools.product(*values_of.values()):
        switches = dict(zip(values_of, values))
        try:
            Config(**(base or {}), **switches)
        except ConfigError:
            continue
        found.append(switches)
    return found


def value_tuples(switches: dict, strength: int) -> set:
    """Every `strength` of the combination's (switch, value) pairs, each a sorted tuple."""
    return set(itertools.combinations(sorted(switches.items(), key=str), strength))


def covering(combinations: list[dict], strength: int, chosen_already: list[dict] = ()) -> list[dict]:
    """A few of `combinations` that, with `chosen_already`, show every `strength` of switch
    values (every pair for 2, every triple for 3) that any of them shows. Greedy: each pick
    covers the most tuples not covered yet, the first such in `combinations`' order; the
    result is in the order of picking and holds none of `chosen_already`.

    A combination's gain only falls as others are picked, so each is kept in a heap under
    the gain it had when last counted, and only the top is counted again (lazy greedy):
    the picks of recounting every gain at every pick, at a fraction of the time."""
    tuples = [value_tuples(switches, strength) for switches in combinations]
    uncovered = set().union(set(), *tuples)
    for switches in chosen_already:
        uncovered -= value_tuples(switches, strength)
    heap = [(-len(found & uncovered), i) for i, found in enumerate(tuples)]
    heapq.heapify(heap)
    chosen = []
    while uncovered:
        _, i = heapq.heappop(heap)
        gain = len(tuples[i] & uncovered)
        if heap and (-gain, i) > heap[0]:
            heapq.heappush(heap, (-gain, i))  # counted again: no longer the best
            continue
        chosen.append(combinations[i])
        uncovered -= tuples[i]
    return chosen


def seeded_sample(combinations: list[dict], size: int, seed: int) -> list[dict]:
    """`size` of `combinations` (all of them if fewer), drawn by `seed`: the same seed, the same sample."""
    return random.Random(seed).sample(combinations, min(size, len(combinations)))


def budget(sweeps: list[list[dict]], sample: int, seed: int) -> tuple[list[dict], list[dict], list[dict]]:
    """(the quick run's combinations, the slow run's covering, the slow run's sample) for
    the valid combinations of each sweep: per sweep a pairwise covering, then what a 3-wise
    covering needs beyond it; and `sample` more drawn by `seed` from what no covering
    chose, over all sweeps."""
    quick, triples = [], []
    for every in sweeps:
        pairs = covering(every, 2)
        quick += pairs
        triples += covering(every, 3, pairs)
    rest = [switches for every in sweeps for switches in every if switches not in quick + triples]
    return quick, triples, seeded_sample(rest, sample, seed)


def complete(sweeps: list[list[dict]]) -> tuple[list[dict], list[dict], list[dict]]:
    """budget's three lists for a release check: every valid combination, the pairwise
    ones in the quick run, the rest in the slow run's covering, no sample."""
    quick = [switches for every in sweeps for switches in covering(every, 2)]
    return quick, [switches for every in sweeps for switches in every if switches not in quick], []


# ------------------------------------------------------------ the three sweeps

SECTION_11 = [name for name, switch in SWITCHES_DECLARED.items() if switch.section == 11]
SECTION_12 = [name for name, switch in SWITCHES_DECLARED.items() if switch.section == 12]
SECTION_13 = [name for name, switch in SWITCHES_DECLARED.items() if switch.section == 13]
SWITCHES = {name: values for name, values in switch_values().items()
            if name != "fairness" and name not in SECTION_11 + SECTION_12 + SECTION_13}
SEAL_SWITCHES = {"physical": switch_values()["physical"], "alias": ("none", "per_id"),
                 **{name: switch_values()[name] for name in SECTION_11}}
# E, the reconnections (spec 12.6 and 13), is a constant that the last two sweeps vary as a switch.
TLA_SWITCHES = {**{name: switch_values()[name] for name in ("compaction", "standing_hold", "cap", "ctl_release")},
                "alias": ("none", "per_id"), **{name: switch_values()[name] for name in SECTION_12}, "E": (0, 1)}
# Section 13's switches with those of section 2 they combine with (13.1: compaction is broadcast).
PEER_SWITCHES = {"standing_hold": (False, True), "physical": ("from_since", "from_upper"),
                 **{name: switch_values()[name] for name in SECTION_13}, "E": (0, 1)}
SHIPPED = dict(compaction="broadcast", standing_hold=True)
EVERY_COMBINATION = valid_combinations(SWITCHES)
EVERY_SEAL_COMBINATION = [{**SHIPPED, **switches} for switches in valid_combinations(SEAL_SWITCHES, SHIPPED)]
EVERY_TLA_COMBINATION = valid_combinations(TLA_SWITCHES)
EVERY_PEER_COMBINATION = [{"compaction": "broadcast", **switches}
                          for switches in valid_combinations(PEER_SWITCHES, {"compaction": "broadcast"})]
SWEEPS = [EVERY_COMBINATION, EVERY_SEAL_COMBINATION, EVERY_TLA_COMBINATION, EVERY_PEER_COMBINATION]

MODES = ("budget", "complete")


def mode_refusal() -> str | None:
    """Why PROTOCOL_SWEEP's value is not one of MODES (one usage line), or None."""
    value = os.environ.get(MODE_VARIABLE) or "budget"
    return None if value in MODES else f"{MODE_VARIABLE}={value!r}: set it to budget (the default) or complete"


def fresh_seed() -> int:
    return random.SystemRandom().randrange(10**6)


COMPLETE = os.environ.get(MODE_VARIABLE) == "complete"
# tests/conftest.py sets the seed once per session, before any pytest-xdist worker starts,
# so that every worker collects the same sample.
SEED = int(os.environ.get(SEED_VARIABLE) or fresh_seed())
QUICK, TRIPLES, SAMPLED = complete(SWEEPS) if COMPLETE else budget(SWEEPS, SAMPLE, SEED)
SLOW = TRIPLES + SAMPLED
SELECTED = QUICK + SLOW


def describe() -> str:
    """One line for the session's header: what the sweeps run, and how to rerun it."""
    if COMPLETE:
        return f"switch sweeps: complete, {len(QUICK)} quick (pairwise) and {len(SLOW)} slow combinations"
    return (f"switch sweeps: {len(QUICK)} quick (pairwise); slow: {len(TRIPLES)} more for 3-wise and "
            f"a sample of {len(SAMPLED)}, seed {SEED} ({SEED_VARIABLE}={SEED} reruns it, "
            f"{MODE_VARIABLE}=complete runs every combination)")


def is_seal_combination(switches: dict) -> bool:
    return not is_tla_combination(switches) and any(name in switches for name in SECTION_11)


def is_tla_combination(switches: dict) -> bool:
    return any(name in switches for name in SECTION_12)


def is_peer_combination(switches: dict) -> bool:
    return any(name in switches for name in SECTION_13)


def sweep_constants(switches: dict) -> tuple[dict, dict | None]:
    """Where one combination of the sweeps is compared: the constants of the whole
    exploration (with liveness), and those of a prefix at two processes (PREFIX states,
    safety only) or None. MaxTime=1 keeps the readable side to a fraction of a second; an
    alias (about fifty times the states) is whole at one process. Section 11's combinations
    are whole at one process (whole at two, with liveness, they take seconds each: the
    pairwise ones are, in the slow run, tests/test_sweep.py); section 12's as the first
    sweep's (its ctl_release is whole at two processes without an alias)."""
    if is_seal_combination(switches):
        return dict(P=1, MaxTime=1), (dict(P=2, MaxTime=1) if switches["alias"] == "none" else None)
    if is_peer_combination(switches):  # section 13: whole at one process, a prefix at two
        return dict(P=1, MaxTime=1), dict(P=2, MaxTime=1)
    return (dict(MaxTime=1) if switches.get("alias", "none") == "none" else dict(MaxTime=1, P=1)), None


PREFIX = 1_500
