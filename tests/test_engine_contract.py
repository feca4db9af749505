"""The engine's contract, on a toy model that knows nothing of the protocol: every rule an
engine relies on is either lifted (it gives the plain search's exact counts and traces) or
checked when the model is built (one ModelError line naming the instance and the fix).

The toy: a global counter `g` and, per process, a counter `x[p]`. The controller
raises `g`; `Bump(p, k)` (never fair, several instances per process) sets `x[p]` to `k`
when that raises it; `Sync` (a whole-state instance, listed last) lowers `g` to the
least `x[p]` when that differs. The property `XAtMostTwo` fails once some `x[p]` is 3."""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import pytest

from protocol.engine import CONTROLLER, LOCAL, WHOLE, Footprint, Instance, Label, Layout, Model, ModelError
from protocol.engine.checker import explore
from protocol.engine.fast import explore_model
from protocol.engine.vector.explore import explore_vector
from protocol.engine.vector.search import vector_refusal

P, TOP = 2, 3


class Toy(NamedTuple):
    g: int
    x: tuple


def raise_g(s: Toy) -> Toy | None:
    return s._replace(g=s.g + 1) if s.g < TOP else None


def bump(s: Toy, p: int, k: int) -> Toy | None:
    if s.x[p] >= k:
        return None
    return s._replace(x=s.x[:p] + (k,) + s.x[p + 1:])


def bump_reading_g(s: Toy, p: int, k: int) -> Toy | None:
    """Bump, but only once g has risen: it reads a global its footprint may not name."""
    return bump(s, p, k) if s.g >= 1 else None


def sync(s: Toy) -> Toy | None:
    low = min(s.x)
    return s._replace(g=low) if low != s.g else None


def x_at_most_two(s: Toy) -> bool:
    return all(x <= 2 for x in s.x)


def instance(label: Label, step, process=None, kind=LOCAL, reads=()) -> Instance:
    return Instance(label, step, process, Footprint(kind, reads), None)


def bumps(step=bump, reads_for=lambda k: (), skip=()) -> list[Instance]:
    """Bump(p, k) for p then k: three instances per process, never fair."""
    return [instance(Label("Bump", p, k), partial(step, p=p, k=k), p, reads=reads_for(k))
            for p in range(P) for k in (1, 2, 3) if (p, k) not in skip]


def toy(instances: list[Instance]) -> Model:
    return Model(initial_states=[Toy(0, (0,) * P)], instances=instances,
                 layout=Layout(Toy, ("g",), ("x",)), processes=P,
                 invariants={"XAtMostTwo": x_at_most_two}, transition_properties={},
                 by_component=frozenset(), liveness={}, fair_families=[], symmetry_refusal=None)


def sound() -> list[Instance]:
    return [instance(Label("Raise"), raise_g, kind=CONTROLLER), *bumps(), instance(Label("Sync"), sync, kind=WHOLE)]


def outcome(run) -> tuple:
    violation = run.violation_path("XAtMostTwo") if hasattr(run, "violation_path") else None
    return run.distinct_states, run.depth, run.transitions, violation


def plain(model: Model):
    return explore(model.initial_states, model.successors, model.invariants)


def trace_of(run, prop: str) -> list:
    found = run.violations[prop]
    return [str(label) for label, _ in run.path(found.state)[1:]]


def test_non_fair_instances_several_per_process_and_a_whole_one_last_give_the_plain_counts():
    model = toy(sound())
    expected = plain(model)
    packed = explore_model(model)
    assert (packed.distinct_states, packed.depth, packed.transitions) == \
        (len(expected.states), expected.depth, expected.transitions)
    assert trace_of(packed, "XAtMostTwo") == trace_of(expected, "XAtMostTwo") == ["Bump(0, 3)"]


def test_the_vector_engine_runs_a_whole_instance_in_its_place():
    # (first, among the controller's or the processes' instances, fair or not: test_vector_whole.py)
    model = toy(sound())
    assert vector_refusal(model) is None
    expected, vector = plain(model), explore_vector(model)
    assert (vector.distinct_states, vector.depth, vector.transitions) == \
        (len(expected.states), expected.depth, expected.transitions)
    assert [vector.path(i) for i in range(vector.distinct_states)] == \
        [expected.path(i) for i in range(len(expected.states))]
    assert trace_of(vector, "XAtMostTwo") == trace_of(expected, "XAtMostTwo")


def test_a_controller_instance_after_the_processes_is_run_in_its_place_by_the_packed_engine():
    late = [*bumps(), instance(Label("Raise"), raise_g, kind=CONTROLLER)]
    expected, packed = plain(toy(late)), explore_model(toy(late))
    assert (packed.distinct_states, packed.transitions) == (len(expected.states), expected.transitions)
    assert [packed.path(i) for i in range(packed.distinct_states)] == \
        [expected.path(i) for i in range(len(expected.states))]  # the same ids and parents
    assert "Raise" in vector_refusal(toy(late))


def test_a_footprint_that_lies_for_the_third_instance_is_one_line_naming_it():
    # Bump(p, 3) reads g; its footprint says it reads nothing, as Bump(p, 1) and (p, 2) truly do.
    # Before, the engine sampled only each action's first family, and counted wrong here.
    lying = [instance(Label("Raise"), raise_g, kind=CONTROLLER),
             *[instance(Label("Bump", p, k), partial(bump_reading_g if k == 3 else bump, p=p, k=k), p)
               for p in range(P) for k in (1, 2, 3)]]
    with pytest.raises(ModelError) as breach:
        explore_model(toy(lying))
    assert str(breach.value).startswith("Bump(p, 3) reads the global g outside its footprint")
    assert "\n" not in str(breach.value)


def test_instances_of_one_family_that_act_otherwise_per_process_are_one_line():
    odd = [instance(Label("Raise"), raise_g, kind=CONTROLLER), *bumps(skip={(1, 2)}),
           instance(Label("Bump", 1, 2), partial(bump, p=1, k=1), 1)]  # labelled k=2, acts as k=1
    with pytest.raises(ModelError) as breach:
        explore_model(toy(odd))
    assert str(breach.value).startswith("Bump(p, 2) acts otherwise on process 1 than on process 0")


@pytest.mark.parametrize("broken, words", [
    (instance(Label("Bump", 1, 1), partial(bump, p=0, k=1), 0), "which must be its label's first argument"),
    (instance(Label("Bump", 0, 1), partial(bump, p=0, k=1), None), "a local footprint acts on one process"),
    (instance(Label("Bump", 5, 1), partial(bump, p=0, k=1), 5), "outside 0 .. 1"),
    (instance(Label("Raise"), raise_g, kind="global"), "unknown footprint kind"),
    (instance(Label("Raise"), raise_g, kind=CONTROLLER), "is listed twice"),
])
def test_a_model_that_breaks_the_contract_is_refused_when_built_in_one_line(broken, words):
    with pytest.raises(ModelError) as refused:
        toy([*sound(), broken])
    assert words in str(refused.value) and "\n" not in str(refused.value)
