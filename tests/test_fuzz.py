"""Property-based fuzzing: Hypothesis walks the checker's own transition system.

A walk (protocol.tools.simulate.walk, the walker of `python -m protocol simulate`)
starts in the initial state and takes one enabled action instance per step,
from `model_for(cfg).successors`, the very function the checker explores,
checking TypeOK, I1, PhysicalLeSince and NoRegression at every step. Here
Hypothesis makes each choice, so a failing walk is shrunk.

How a choice is encoded (this shapes the shrinking, not what can be reached):
Hypothesis draws a position in a fixed list of every action instance, the
runtime actions first, and the walk takes the first enabled instance at or
after it, wrapping round. Every enabled action can be drawn. Shrinking moves
draws toward 0, that is toward "let the runtimes catch up", which makes no
violation by itself, so a shrunk walk keeps only the steps the violation
needs; deleting a step leaves the meaning of the later draws intact.

Reproducing a failure: `@given` tests print the falsifying example and a
`@reproduce_failure(...)` line (see tests/conftest.py); paste it above the
test. The `find` tests use a fixed seed, printed in their failure message.
Run the CI budget locally with HYPOTHESIS_PROFILE=ci.
"""

from __future__ import annotations

import random
from functools import lru_cache

import pytest
from hypothesis import find, given, note, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from protocol import properties as props
from helpers import checked
from protocol.engine.checker import explore
from protocol.model.config import SWITCHES, Config, refused_switch
from protocol.configurations.named import named_configurations
from helpers import switch_values
from protocol.model.next import RUNTIME_ACTIONS, model_for
from protocol.run import check, safety_properties
from protocol.tools.simulate import WalkChecks, checks_for, walk
from protocol.model.next import replay

WALK_DEPTH = 60  # states per walk, at most; the wide constants rarely run out before
HUNT_DEPTH = 20  # every refutation fails within 8 states (`hunted`); longer walks only slow the shrinking
# A hunt stops at its first find, so its budget costs time only when it fails.
HUNT_EXAMPLES = 10 * settings.default.max_examples
FIND_SEED = 0
SAFETY_REFUTATIONS = [
    named for named in named_configurations().values() if named.violates in props.declared_names(*props.SAFETY)
]


def hunted(named) -> str:
    """The safety property a hunt looks for: of those the refutation expects to break, the one
    it breaks soonest (the manifest's first on a tie). Section 13's refutations name I1 first, which
    they break only in 10 or 11 states, along a path few random walks take; they break PeerHeld,
    SinceLeStanding or NoRegression sooner (HoldsPeerByReader: PeerHeld in 3)."""
    safety = props.declared_names(*props.SAFETY)
    return min((prop for prop, _ in named.expect if prop in safety), key=lambda prop: dict(named.expect)[prop])

# Wider than exhaustive search reaches (spec section 1: defaults P=2, D=1, MaxTime=2).
WIDE = st.fixed_dictionaries(
    {"P": st.integers(1, 4), "D": st.integers(0, 4), "MaxTime": st.integers(0, 5)}
)
# Small enough that every switch combination explores in well under a second.
SMALL = st.sampled_from([
    {"P": 1, "D": 1, "MaxTime": 1}, {"P": 2, "D": 1, "MaxTime": 1}, {"P": 1, "D": 1, "MaxTime": 2},
    {"P": 1, "D": 2, "MaxTime": 1}, {"P": 2, "D": 0, "MaxTime": 2}, {"P": 2, "D": 1, "MaxTime": 0},
])
# The constants at which each refutation is also hunted beyond the defaults.
WIDER = {"P": 3, "D": 2, "MaxTime": 3}


def without_refused(switches: dict) -> dict:
    """`switches` with every value that cannot act put back to its default, one at a time
    (a combination that is valid is returned unchanged)."""
    chosen = dict(switches)
    while (name := refused_switch(chosen)) is not None:
        chosen[name] = SWITCHES[name].default
    return chosen


# Any valid combination of every switch (those of sections 10 and 11 included): each switch
# drawn from its values, then a value that cannot act there put back to its default, so a
# valid combination is drawn as itself and every one can be drawn (25,536 of them).
EVERY_SWITCH_COMBINATION = st.fixed_dictionaries(
    {name: st.sampled_from(values) for name, values in switch_values().items()}).map(without_refused)


def configs(constants, explored_whole: bool = False) -> st.SearchStrategy[Config]:
    """Any configuration: a valid combination of every mechanism switch, with the given constants
    (with an alias, at one process: a second index multiplies the states by about fifty; and,
    where each drawn configuration is explored whole, with one peek and MaxTime 1 at most)."""
    def build(c, s):
        if s["alias"] != "none":
            c = {**c, "P": 1}
            if explored_whole:
                c = {**c, "D": min(c["D"], 1), "MaxTime": min(c["MaxTime"], 1)}
        return Config(**c, **s)

    return st.builds(build, constants, EVERY_SWITCH_COMBINATION)


@lru_cache(maxsize=None)
def model_and_checks(cfg):
    return model_for(cfg), checks_for(cfg)


@st.composite
def walks(draw, cfg, depth=WALK_DEPTH, check_properties=True):
    """A random walk of `cfg`, every choice drawn by Hypothesis (see the module docstring)."""
    model, checks = model_and_checks(cfg)
    order = sorted(model.labels, key=lambda label: label.name not in RUNTIME_ACTIONS)
    position = {label: i for i, label in enumerate(order)}

    def choose(options) -> int:
        wanted = draw(st.integers(0, len(order) - 1))
        return min(range(len(options)), key=lambda k: (position[options[k][0]] - wanted) % len(order))

    return walk(model, checks if check_properties else WalkChecks({}, {}), choose, depth)


def labels(found) -> list[str]:
    return [str(step.action) for step in found.steps[1:]]


# --------------------------------------------- 1. shipped designs, wide constants


@pytest.mark.parametrize("name", ["Holds", "HoldsAcquire"])
@given(constants=WIDE, data=st.data())
def test_shipped_designs_survive_random_walks_at_wide_constants(name, constants, data):
    cfg = named_configurations()[name].config.evolve(**constants)
    found = data.draw(walks(cfg))
    note(f"{cfg.constants}: {labels(found)}")
    assert found.violated == (), f"{name} {cfg.constants} violates {found.violated}: {labels(found)}"


# ----------------------------------- 2. every refutation found, then shrunk


def hunt(named, prop: str):
    """The shrunk walk violating `prop` and how many walks it took to find one (1-based)."""
    verdicts = []

    def violates(found) -> bool:
        verdicts.append(prop in found.violated)
        return verdicts[-1]

    try:
        shrunk = find(walks(named.config, HUNT_DEPTH), violates, settings=settings(database=None, max_examples=HUNT_EXAMPLES),
                      random=random.Random(FIND_SEED))
    except NoSuchExample:
        pytest.fail(f"no walk of {named.name} {named.config.constants} violated {prop} within "
                    f"{HUNT_EXAMPLES} walks (hypothesis.find, seed {FIND_SEED})")
    return shrunk, verdicts.index(True) + 1


@pytest.mark.slow
@pytest.mark.parametrize("named", SAFETY_REFUTATIONS, ids=lambda named: named.name)
def test_fuzzing_finds_and_shrinks_each_refutation(named):
    """At the default constants the shrunk walk is compared with the breadth-first shortest."""
    shortest = checked(named.name).properties[hunted(named)].trace_length
    shrunk, needed = hunt(named, hunted(named))
    found = f"found after {needed} walks, shrunk to {shrunk.length} states: {labels(shrunk)}"
    assert shrunk.length >= shortest, f"shorter than breadth-first's {shortest}: the checker missed it; {found}"
    # The shrinker deletes steps one draw at a time; a controller step that only enables
    # nothing later (a second AdvancePolicy, an Ingest before a Reconnect) may survive it.
    assert shrunk.length <= shortest + 3, found
    assert [step.state for step in replay(named.config, labels(shrunk))] == [s.state for s in shrunk.steps]


@pytest.mark.slow
@pytest.mark.parametrize("named", [
    named for named in SAFETY_REFUTATIONS], ids=lambda named: named.name)
def test_fuzzing_finds_each_refutation_at_wider_constants(named):
    # the design's silent reconnection has one dataflow (spec 12.6 refuses D=2)
    wider = named.with_constants({**WIDER, **({"D": 1} if named.config.hello == "silent" else {})})
    shortest = check(wider, stop_on_violation=True).properties[hunted(named)].trace_length
    shrunk, needed = hunt(wider, hunted(named))
    # A draw shrunk to 0 lets the first enabled runtime catch up, and at P processes that
    # is often another process's: removing such a run of steps means deleting several
    # draws and raising the next at once, which the shrinker does not always find. So a
    # shrunk walk may keep up to one step per extra process beyond twice the shortest
    # (HoldsAcquireFloorAgent: 9 states against breadth-first's 4, MaintStep(1),
    # MaintStep(2) and InterStep(0..2) left between MaintStep(0) and Publish(0)).
    slack = wider.config.P - 1
    assert shortest <= shrunk.length <= 2 * shortest + slack, f"shrunk to {shrunk.length} states: {labels(shrunk)}"


# --------------------------------- 3. walks stay inside the explored graph


@lru_cache(maxsize=None)
def explored(cfg):
    """The exhaustive exploration of `cfg` with its edges, and its edges as a set."""
    model = model_for(cfg)
    run = explore(model.initial_states, model.successors, *safety_properties(cfg), record_edges=True)
    edges = {(src, run.labels[label], dst) for src, label, dst in zip(run.edge_src, run.edge_label, run.edge_dst)}
    return run, edges


@pytest.mark.slow
@given(cfg=configs(SMALL, explored_whole=True), data=st.data())
def test_every_walk_is_a_path_of_the_explored_graph(cfg, data):
    run, edges = explored(cfg)
    found = data.draw(walks(cfg, check_properties=False))
    note(labels(found))
    ids = [run.index.get(step.state) for step in found.steps]
    assert None not in ids, f"state {ids.index(None) + 1} of the walk was never explored"
    for i, step in enumerate(found.steps[1:]):
        assert (ids[i], step.action, ids[i + 1]) in edges, f"step {i + 1} ({step.action}) is not a recorded edge"


# ------------------------------------------- 4. configuration fuzzing


def violable(cfg) -> set[str]:
    """The safety properties some run of `cfg` violates, predicted from its switches alone:
    those that belong to it and none of whose declared guards is in place
    (protocol/properties/guards.py says which mechanism guards which property, and why)."""
    return {prop.name for prop in props.PROPERTIES if prop.kind != props.LIVENESS and prop.can_fail(cfg)}


@pytest.mark.slow
@given(cfg=configs(SMALL, explored_whole=True))
def test_exhaustive_search_violates_exactly_the_predicted_properties(cfg):
    run, _ = explored(cfg)
    assert run.complete
    assert set(run.violations) == violable(cfg)


@given(cfg=configs(WIDE), data=st.data())
def test_no_walk_violates_a_property_no_mechanism_can_break(cfg, data):
    """In particular: broadcast with the standing hold never violates I1."""
    found = data.draw(walks(cfg))
    note(labels(found))
    assert set(found.violated) <= violable(cfg), labels(found)


@pytest.mark.slow
@given(constants=st.fixed_dictionaries({"P": st.integers(1, 4), "D": st.integers(1, 4),
                                        "MaxTime": st.integers(1, 5)}),
       physical=st.sampled_from([v for v in switch_values()["physical"] if v != "from_cuts"]),  # cuts need a seal
       fairness=st.booleans())
def test_without_any_mechanism_i1_fails_in_six_states(constants, physical, fairness):
    """Routed, no standing hold, no cap, no acquisition: I1 fails whenever D >= 1 and MaxTime >= 1,
    always by create, advance, drop, apply, publish (it cannot fail sooner)."""
    cfg = Config(**constants, physical=physical, fairness=fairness)
    model, checks = model_and_checks(cfg)
    run = explore(model.initial_states, model.successors, {"I1": checks.state["I1"]}, stop_on_violation=True)
    assert len(run.counterexample("I1") or ()) == 6


def report_hunts() -> None:
    """Per refutation: walks needed, shrunk length, breadth-first shortest (`python tests/test_fuzz.py`)."""
    print(f"hypothesis.find, seed {FIND_SEED}, walks of at most {HUNT_DEPTH} states, budget {HUNT_EXAMPLES}")
    for named in SAFETY_REFUTATIONS:
        for constants in ({}, WIDER):
            hunted = named.with_constants(constants)
            shortest = check(hunted, stop_on_violation=True).properties[named.violates].trace_length
            shrunk, needed = hunt(hunted, named.violates)
            print(f"{named.name:23} {named.violates:16} {str(hunted.config.constants):33} "
                  f"walks needed {needed:3}  shrunk {shrunk.length}  BFS shortest {shortest}")


if __name__ == "__main__":
    report_hunts()
