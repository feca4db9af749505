"""Local variables a step's footprint leaves untouched (`Footprint.untouched`): the packed
engine runs such a step once per value of the other locals, and a declaration that is
wrong (the step writes or reads one of them, or names no local variable) is one
ModelError line naming the action and the fix, never a wrong count.

The toy knows nothing of the protocol: a global counter `g`; per process a counter `x[p]`
and a queue length `y[p]`. The controller raises `g`, `Push(p)` raises `y[p]`, and
`Bump(p, k)` sets `x[p]` to `k` where that raises it, leaving `y` untouched."""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import pytest

from protocol.engine import CONTROLLER, LOCAL, Footprint, Instance, Label, Layout, Model, ModelError
from protocol.engine.checker import explore
from protocol.engine.fast import explore_model
from protocol.engine.vector.explore import explore_vector

P, TOP = 2, 3


class Toy(NamedTuple):
    g: int
    x: tuple
    y: tuple


def raise_g(s: Toy) -> Toy | None:
    return s._replace(g=s.g + 1) if s.g < TOP else None


def push(s: Toy, p: int) -> Toy | None:
    return s._replace(y=s.y[:p] + (s.y[p] + 1,) + s.y[p + 1:]) if s.y[p] < TOP else None


def bump(s: Toy, p: int, k: int) -> Toy | None:
    return s._replace(x=s.x[:p] + (k,) + s.x[p + 1:]) if s.x[p] < k else None


def bump_writing_y(s: Toy, p: int, k: int) -> Toy | None:
    after = bump(s, p, k)
    return None if after is None else after._replace(y=s.y[:p] + (0,) + s.y[p + 1:])


def bump_reading_y(s: Toy, p: int, k: int) -> Toy | None:
    return bump(s, p, k) if s.y[p] != 1 else None


def toy(step=bump, untouched=("y",), controller_untouched=()) -> Model:
    instances = [Instance(Label("Raise"), raise_g, None, Footprint(CONTROLLER, untouched=controller_untouched), None)]
    instances += [Instance(Label("Push", p), partial(push, p=p), p, Footprint(LOCAL), None) for p in range(P)]
    instances += [Instance(Label("Bump", p, k), partial(step, p=p, k=k), p, Footprint(LOCAL, untouched=untouched), None)
                  for p in range(P) for k in (1, 2, 3)]
    return Model(initial_states=[Toy(0, (0,) * P, (0,) * P)], instances=instances,
                 layout=Layout(Toy, ("g",), ("x", "y")), processes=P,
                 invariants={}, transition_properties={}, by_component=frozenset(), liveness={},
                 fair_families=[], symmetry_refusal=None)


def counts(run) -> tuple:
    return run.distinct_states, run.depth, run.transitions


def test_a_step_memoised_on_what_it_touches_gives_the_plain_search_s_states_and_paths():
    model = toy()
    expected = explore(model.initial_states, model.successors, {})
    for run in (explore_model(model), explore_vector(model)):
        assert counts(run) == (len(expected.states), expected.depth, expected.transitions)
        assert [run.path(i) for i in range(run.distinct_states)] == \
            [expected.path(i) for i in range(len(expected.states))]


def test_the_memo_runs_the_step_once_per_value_of_what_it_touches():
    def runs(untouched: tuple) -> int:
        calls = []

        def counted(s: Toy, p: int, k: int) -> Toy | None:
            calls.append(1)
            return bump(s, p, k)

        explore_model(toy(counted, untouched))
        return len(calls)

    # Four values of y per value of x, so most runs are saved; not all on so small a toy, where
    # the engine's samples (every local id that is a power of two) are run regardless.
    assert runs(("y",)) < runs(())


@pytest.mark.parametrize("step, words", [
    (bump_writing_y, "Bump(p, 1) wrote y, which its footprint leaves untouched: remove 'y' from its footprint's untouched"),
    (bump_reading_y, "Bump(p, 1) reads the local y, which its footprint leaves untouched: remove 'y' from its "
                     "footprint's untouched variables"),
])
@pytest.mark.parametrize("explore_with", [explore_model, explore_vector], ids=["packed", "vector"])
def test_a_wrong_declaration_is_one_line_naming_the_action_and_the_fix(step, words, explore_with):
    with pytest.raises(ModelError) as breach:
        explore_with(toy(step))
    assert str(breach.value).startswith(words)
    assert "\n" not in str(breach.value)


@pytest.mark.parametrize("model, words", [
    (toy(untouched=("z",)), "Bump(p, 1) leaves 'z' untouched, which is not a local variable: name only some of x, y"),
    # a controller's untouched variables are globals (tests/test_controller_untouched.py)
    (toy(controller_untouched=("y",)), "Raise leaves 'y' untouched, which is not a global variable: name only some of g"),
])
def test_a_declaration_that_cannot_hold_is_refused_when_the_engine_is_built(model, words):
    with pytest.raises(ModelError) as breach:
        explore_model(model)
    assert str(breach.value).startswith(words)
