"""Whole instances on the vector engine (engine/vector/whole.py), on a toy model that knows
nothing of the protocol: wherever a whole instance is enumerated (first, among the
controller's instances, among the processes', last), fair or not, the vector engine gives
the readable search's distinct states, transitions, depth, ids and parents, edges in
order, shortest traces and liveness verdicts and lassos, and the packed engine's too.

The toy: a global counter `g` and per process a counter `x[p]`. `Raise` and `Wrap` (the
controller) raise `g` and wrap it to 0; `Bump(p, k)` (never fair) raises `x[p]` to `k`;
the whole instances `Level` (sets every `x[p]` to the greatest) and `Sync` (sets `g` to
the least `x[p]`); the each instance `Spread` (from `g` = 1, sets it to 2 and raises
every `x[p]` to 1, each by its own value). `GAtMostOne` fails once `g` is 2; `Catches`
is `x[0] >= 1 ~> x[1] >= 1`, which holds exactly when `Level` is fair."""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import pytest

from protocol.engine import (CONTROLLER, EACH, LOCAL, WHOLE, Footprint, Instance, Label, Layout, LeadsTo, Model,
                             ModelError)
from protocol.engine.checker import explore
from protocol.engine.fast import explore_model
from protocol.engine.vector.explore import explore_vector
from protocol.engine.vector.search import vector_refusal
from protocol.run import liveness_verdicts

P = 2


class Toy(NamedTuple):
    g: int
    x: tuple


def raise_g(s: Toy) -> Toy | None:
    return s._replace(g=s.g + 1) if s.g < 2 else None


def wrap(s: Toy) -> Toy | None:
    return s._replace(g=0) if s.g == 2 else None


def bump(s: Toy, p: int, k: int) -> Toy | None:
    return s._replace(x=s.x[:p] + (k,) + s.x[p + 1:]) if s.x[p] < k else None


def level(s: Toy) -> Toy | None:
    top = max(s.x)
    return s._replace(x=(top,) * len(s.x)) if min(s.x) != top else None


def sync(s: Toy) -> Toy | None:
    low = min(s.x)
    return s._replace(g=low) if low != s.g else None


def spread(s: Toy) -> Toy | None:
    return s._replace(g=2, x=tuple(max(x, 1) for x in s.x)) if s.g == 1 else None


def nudge(s: Toy) -> Toy | None:
    """Raises g while process 0's x is 0: its guard reads a process's locals."""
    return s._replace(g=s.g + 1) if s.x[0] == 0 and s.g < 2 else None


def controller(name: str, step) -> Instance:
    return Instance(Label(name), step, None, Footprint(CONTROLLER), None)


def whole(name: str, step, fair: bool = False, kind: str = WHOLE) -> Instance:
    return Instance(Label(name), step, None, Footprint(kind), (name,) if fair else None)


def bumps(p: int) -> list[Instance]:
    return [Instance(Label("Bump", p, k), partial(bump, p=p, k=k), p, Footprint(LOCAL), None) for k in (1, 2)]


def toy(instances: list[Instance]) -> Model:
    catches = LeadsTo(lambda s: s.x[0] >= 1, lambda s: s.x[1] >= 1, "x[0] >= 1 ~> x[1] >= 1")
    families = [instance.family for instance in instances if instance.family is not None]
    return Model(initial_states=[Toy(0, (0,) * P)], instances=instances, layout=Layout(Toy, ("g",), ("x",)),
                 processes=P, invariants={"GAtMostOne": lambda s: s.g <= 1}, transition_properties={},
                 by_component=frozenset(), liveness={"Catches": [catches]}, fair_families=families,
                 symmetry_refusal=None)


def orders(fair: bool) -> dict:
    """The toy's instances with the whole ones first, among the controller's, among the
    processes', and last."""
    Raise, Wrap, Level, Sync, Spread = (controller("Raise", raise_g), controller("Wrap", wrap),
                                        whole("Level", level, fair), whole("Sync", sync),
                                        whole("Spread", spread, kind=EACH))
    return {
        "first": [Level, Spread, Sync, Raise, Wrap, *bumps(0), *bumps(1)],
        "among the controller's": [Raise, Level, Wrap, Spread, Sync, *bumps(0), *bumps(1)],
        "among the processes'": [Raise, Wrap, *bumps(0), Spread, Level, *bumps(1), Sync],
        "last": [Raise, Wrap, *bumps(0), *bumps(1), Sync, Level, Spread],
    }


def graph(run) -> tuple:
    """Everything a run's exploration decides: counts, ids and parents, edges in order."""
    n = run.distinct_states
    return (n, run.transitions, run.depth, [run.path(i) for i in range(n)],
            list(run.edge_src), list(run.edge_dst), [run.labels[i] for i in run.edge_label])


@pytest.mark.parametrize("fair", [False, True], ids=["unfair", "fair"])
@pytest.mark.parametrize("where", list(orders(False)))
def test_a_whole_instance_anywhere_gives_the_readable_search_exactly(where, fair):
    model = toy(orders(fair)[where])
    assert vector_refusal(model) is None
    readable = explore(model.initial_states, model.successors, model.invariants, record_edges=True)
    vector = explore_vector(model, record_edges=True)
    packed = explore_model(model, record_edges=True)
    assert graph(vector) == graph(packed) == graph(readable)
    trace = readable.counterexample("GAtMostOne")
    assert vector.counterexample("GAtMostOne") == packed.counterexample("GAtMostOne") == trace
    verdicts = liveness_verdicts(readable, model)
    assert liveness_verdicts(vector, model) == liveness_verdicts(packed, model) == verdicts
    assert verdicts["Catches"].holds is fair  # a fair Level levels x[1] up: the lasso is the unfair case's


@pytest.mark.parametrize("step, words", [
    (level, "rewrites a process's locals by more than the globals and that process's locals"),
    (nudge, "its guard or its effect on the globals reads a process's locals"),
])
def test_an_each_footprint_that_lies_is_one_line_naming_the_instance_and_the_fix(step, words):
    model = toy([controller("Raise", raise_g), *bumps(0), *bumps(1), whole("Lying", step, kind=EACH)])
    assert explore_model(model).distinct_states  # the packed engine runs it whole: exact
    with pytest.raises(ModelError) as breach:
        explore_vector(model)
    message = str(breach.value)
    assert message.startswith("Lying") and words in message and "give it a whole footprint" in message
    assert "\n" not in message
