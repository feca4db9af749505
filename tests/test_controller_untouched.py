"""Globals a controller step's footprint leaves untouched (`Footprint.untouched` on a
controller footprint): validate's engine runs such a step once per value of the other
globals (tools/log_engine.py, `controller_successors`), which a silent Ingest makes
worth it: it leaves one globals value per `upper`, which no controller command reads.
The sharing changes no count or verdict; a declaration that is wrong (the step writes
or reads an untouched global) is one ModelError line naming the action and the fix;
one naming no global variable is refused when the engine is built.

The toy knows nothing of the protocol: two global counters `g` and `h`, which the
controller's `Raise` and `Lift` raise; per process a counter `x[p]`."""

from __future__ import annotations

from typing import NamedTuple

import attrs
import pytest

from protocol.engine import CONTROLLER, WHOLE, Footprint, Instance, Label, Layout, Model, ModelError
from protocol.engine.fast import explore_model
from protocol.model import actions
from protocol.tools import factored
from protocol.tools.bench import walk_log
from protocol.tools.log import parse
from protocol.tools.log_engine import LogEngine
from protocol.tools.validate import validate
from reference_validate import outcome, reference_outcome
from test_untouched import P, raise_g

class Toy(NamedTuple):
    g: int
    h: int
    x: tuple


def raise_g_below_h(s: Toy) -> Toy | None:
    """Reads h: raises g only while it is below h."""
    return s._replace(g=s.g + 1) if s.g < s.h else None


def raise_g_and_h(s: Toy) -> Toy | None:
    after = raise_g(s)
    return None if after is None else after._replace(h=after.h + 1)


def toy(step=raise_g, footprint=Footprint(CONTROLLER, untouched=("h",))) -> Model:
    instances = [Instance(Label("Raise"), step, None, footprint, None)]
    return Model(initial_states=[Toy(0, 0, (0,) * P)], instances=instances,
                 layout=Layout(Toy, ("g", "h"), ("x",)), processes=P,
                 invariants={}, transition_properties={}, by_component=frozenset(), liveness={},
                 fair_families=[], symmetry_refusal=None)


def globals_ids(engine: LogEngine, values: list[tuple]) -> list[int]:
    return [engine.intern_global(value) for value in values]


def test_a_step_is_run_once_per_value_of_the_globals_it_touches():
    """Globals that differ only in h share one run of Raise, but for the sample (ids that
    are powers of two, run regardless); each gets its own h back."""
    runs = []

    def counted(s: Toy) -> Toy | None:
        runs.append(s.h)
        return raise_g(s)

    engine = LogEngine(toy(counted))
    ids = globals_ids(engine, [(1, h) for h in range(12)])
    found = [engine.controller_successors(0, g) for g in ids]
    assert [engine.globals[steps[0][1]] for steps in found] == [(2, h) for h in range(12)]
    sampled = [g for g in ids if g & (g - 1) == 0]
    assert 0 < len(runs) <= len(sampled) + 1 < len(ids)


def test_without_the_declaration_every_globals_value_is_run():
    runs = []

    def counted(s: Toy) -> Toy | None:
        runs.append(s.h)
        return raise_g(s)

    engine = LogEngine(toy(counted, Footprint(CONTROLLER)))
    for g in globals_ids(engine, [(1, h) for h in range(12)]):
        engine.controller_successors(0, g)
    assert len(runs) == 12


@pytest.mark.parametrize("step, words", [
    (raise_g_and_h, "Raise wrote h, which its footprint leaves untouched: remove 'h' from its footprint's untouched"),
    (raise_g_below_h, "Raise acts otherwise on globals that differ only in h, which its footprint leaves untouched"),
])
def test_a_wrong_declaration_is_one_line_naming_the_action_and_the_fix(step, words):
    engine = LogEngine(toy(step))
    with pytest.raises(ModelError) as breach:
        for g in globals_ids(engine, [(1, h) for h in (3, 1, 0, 2)]):
            engine.controller_successors(0, g)
    assert str(breach.value).startswith(words)
    assert "\n" not in str(breach.value)


@pytest.mark.parametrize("footprint, words", [
    (Footprint(CONTROLLER, untouched=("x",)), "Raise leaves 'x' untouched, which is not a global variable: "
                                              "name only some of g, h"),
    (Footprint(WHOLE, untouched=("h",)), "Raise declares untouched variables, which only a local or controller "
                                         "footprint may"),
])
def test_a_declaration_that_cannot_hold_is_refused_when_the_engine_is_built(footprint, words):
    with pytest.raises(ModelError) as breach:
        explore_model(toy(footprint=footprint))
    assert str(breach.value).startswith(words)


# ------------------------------------------------------------------ on the protocol


def without_controller_untouched(monkeypatch) -> None:
    monkeypatch.setattr(actions, "ACTIONS", tuple(
        attrs.evolve(action, footprint=lambda cfg, p, declared=action.footprint: attrs.evolve(
            declared(cfg, p), untouched=()) if declared(cfg, p).kind == CONTROLLER else declared(cfg, p))
        for action in actions.ACTIONS))


def shared_runs(monkeypatch) -> list:
    """Records each controller step answered from another globals value's run."""
    shared, run = [], LogEngine.controller_successors

    def recorded(engine, segment, g):
        before = len(engine.controller_cores[segment].memo) if engine.controller_cores[segment] else None
        found = run(engine, segment, g)
        if before is not None and len(engine.controller_cores[segment].memo) == before and g & (g - 1):
            shared.append(g)
        return found

    monkeypatch.setattr(LogEngine, "controller_successors", recorded)
    return shared


@pytest.mark.slow  # about half a second or more: the quick run stays near a CPU minute; CI runs it
def test_steps_shared_across_upper_give_the_exhaustive_search_s_counts(monkeypatch):
    text = walk_log("Holds", {"P": 2, "D": 4, "MaxTime": 20}, 60, 3, ["Publish", "Ingest"])
    shared = shared_runs(monkeypatch)
    decided = factored.follow(parse(text))
    assert shared, "no controller step was shared between two globals values: the test no longer tests it"
    assert outcome(decided) == reference_outcome(text)


@pytest.mark.parametrize("name, processes", [("Holds", 2), ("HoldsRouted", 2), ("HoldsCutsUpper", 2),
                                             ("HoldsSeal", 1), ("HoldsCapReconnect", 1)])
def test_the_declaration_changes_nothing_validate_finds(monkeypatch, name, processes):
    text = walk_log(name, {"P": processes, "D": 3, "MaxTime": 12}, 120, 7, ["Publish", "Ingest"])
    declared = validate(parse(text))
    without_controller_untouched(monkeypatch)
    assert outcome(validate(parse(text))) == outcome(declared)
