"""Steps see only what they declare (issue 56): a per-process step that reads another process's
entry, a global its footprint does not name, or a local it says it leaves untouched, and one that
writes outside its process, is one ModelError line naming the step, the variable and the fix, in
the readable search and in every engine, never a figure. Each mistake is planted twice: in a toy
model that knows nothing of the protocol, and in the protocol's own InterStep."""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import attrs
import pytest

from protocol.engine import CONTROLLER, LOCAL, Footprint, Instance, Label, Layout, Model, ModelError
from protocol.engine.checker import explore
from protocol.engine.fast import explore_model
from protocol.engine.vector.explore import explore_vector
from protocol.model import actions
from protocol.configurations.named import lookup
from protocol.model.state import DROPPED
from protocol.run import check
from helpers import ENGINE_OPTIONS, cli  # noqa: F401  (cli: the fixture)

P = 2


class Toy(NamedTuple):
    g: int
    x: tuple
    y: tuple


def raise_g(s):
    return s._replace(g=s.g + 1) if s.g < 2 else None


def bump(s, p):
    return s._replace(x=s.x[:p] + (s.x[p] + 1,) + s.x[p + 1:]) if s.x[p] < 2 else None


def bump_reading_the_next_process(s, p):
    """Bump, guarded on the next process's counter: every packed engine sees its own copy there."""
    return bump(s, p) if s.x[(p + 1) % P] <= s.x[p] else None


def bump_reading_g(s, p):
    return bump(s, p) if s.g >= 1 else None


def bump_reading_y(s, p):
    return bump(s, p) if s.y[p] == 0 else None


def bump_writing_g(s, p):
    after = bump(s, p)
    return None if after is None else after._replace(g=0)


def toy(step, untouched=()) -> Model:
    instances = [Instance(Label("Raise"), raise_g, None, Footprint(CONTROLLER), None),
                 *[Instance(Label("Bump", p), partial(step, p=p), p, Footprint(LOCAL, (), untouched), None)
                   for p in range(P)]]
    return Model(initial_states=[Toy(0, (0,) * P, (0,) * P)], instances=instances,
                 layout=Layout(Toy, ("g",), ("x", "y")), processes=P, invariants={}, transition_properties={},
                 by_component=frozenset(), liveness={}, fair_families=[], symmetry_refusal=None)


TOY_ENGINES = {
    "readable": lambda model: explore(model.initial_states, model.successors, model.invariants),
    "packed": explore_model,
    "packed-symmetry": partial(explore_model, symmetry=True),
    "fingerprints": partial(explore_model, fingerprints=True),
    "vector": explore_vector,
    "vector-symmetry": partial(explore_vector, symmetry=True),
}
MISTAKES = [
    (bump_reading_the_next_process, (), "Bump(p) reads x[1], another process's entry, from process 0's step"),
    (bump_reading_g, (), "Bump(p) reads the global g outside its footprint: add 'g' to its footprint's reads"),
    (bump_reading_y, ("y",), "Bump(p) reads the local y, which its footprint leaves untouched"),
    (bump_writing_g, (), "Bump(p) writes the global 'g', outside its process's locals"),
]


def test_the_sound_toy_explores_alike_everywhere():
    counts = {name: explore(toy(bump).initial_states, toy(bump).successors, {}).distinct_states
              if name == "readable" else engine(toy(bump)).counts().distinct_states
              for name, engine in TOY_ENGINES.items() if name not in ("readable",)}
    assert set(counts.values()) == {3 * 3 * 3}


@pytest.mark.parametrize("engine", TOY_ENGINES)
@pytest.mark.parametrize("step, untouched, words", MISTAKES, ids=[m[0].__name__ for m in MISTAKES])
def test_a_toy_step_that_sees_past_its_footprint_is_one_line_in_every_engine(engine, step, untouched, words):
    with pytest.raises(ModelError) as refused:
        TOY_ENGINES[engine](toy(step, untouched))
    assert words in str(refused.value) and "\n" not in str(refused.value)


# ------------------------------------------------------------------ the protocol's own model


def inter_step_guarded_on_the_next_process(s, cfg, p, record=None):
    """InterStep(p), waiting while the next process has rendered peek 0."""
    if s.readers[(p + 1) % cfg.P][0] is not None:
        return None
    return actions.inter_step(s, cfg, p, record)


def inter_step_guarded_on_df(s, cfg, p, record=None):
    """InterStep(p), waiting while peek 0 is dropped: df is a global its footprint does not name."""
    if s.df[0] == DROPPED:
        return None
    return actions.inter_step(s, cfg, p, record)


PROTOCOL_MISTAKES = [
    (inter_step_guarded_on_the_next_process, "InterStep(p) reads readers[1], another process's entry"),
    (inter_step_guarded_on_df, "InterStep(p) reads the global df outside its footprint"),
]


@pytest.fixture
def sabotaged(monkeypatch):
    """Replace InterStep's step in the declarations every engine builds its model from (forked
    workers inherit it)."""
    def plant(step):
        monkeypatch.setattr(actions, "ACTIONS", tuple(attrs.evolve(action, step=step) if action.name == "InterStep"
                                                      else action for action in actions.ACTIONS))
    return plant


@pytest.mark.parametrize("step, words", PROTOCOL_MISTAKES, ids=[m[0].__name__ for m in PROTOCOL_MISTAKES])
def test_a_protocol_step_that_sees_past_its_footprint_is_refused_by_the_readable_search(sabotaged, step, words):
    from protocol.model.next import model_for

    sabotaged(step)
    model = model_for(lookup("Holds").config.evolve(MaxTime=1))
    with pytest.raises(ModelError) as refused:
        explore(model.initial_states, model.successors, model.invariants, model.transition_properties)
    assert words in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("options", ENGINE_OPTIONS.values(), ids=list(ENGINE_OPTIONS))
@pytest.mark.parametrize("step, words", PROTOCOL_MISTAKES, ids=[m[0].__name__ for m in PROTOCOL_MISTAKES])
def test_a_protocol_step_that_sees_past_its_footprint_is_one_line_in_every_engine(sabotaged, step, words, options):
    sabotaged(step)
    named = lookup("Holds").with_constants({"MaxTime": 1})
    with pytest.raises(ModelError) as refused:
        check(named, **options)
    assert words in str(refused.value) and "\n" not in str(refused.value)


def test_the_command_line_says_it_in_one_line(sabotaged, cli):
    sabotaged(inter_step_guarded_on_df)
    code, out, err = cli("check", "Holds", "-c", "MaxTime=1")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "InterStep(p) reads the global df outside its footprint" in err


# ------------------------------------------------------------------ properties


def since_allowed_reading_the_next_process(s, p, cfg=None):
    """SinceAllowed of process p, but judged on the next process's since."""
    return s.since[(p + 1) % len(s.since)] <= s.sent


def since_allowed_reading_policy(s, p, cfg=None):
    """SinceAllowed of process p, but against policy: a global it does not declare (it declares sent)."""
    return s.since[p] <= s.policy


PROPERTY_MISTAKES = [
    (since_allowed_reading_the_next_process, "SinceAllowed reads since[1], another process's entry"),
    (since_allowed_reading_policy, "SinceAllowed reads the global policy outside the globals it declares"),
]


@pytest.fixture
def sabotaged_property(monkeypatch):
    from protocol import properties as props

    def plant(per_process):
        monkeypatch.setattr(props, "PROPERTIES", tuple(
            attrs.evolve(prop, per_process=per_process) if prop.name == "SinceAllowed" else prop
            for prop in props.PROPERTIES))
    return plant


@pytest.mark.parametrize("options", [{}, *ENGINE_OPTIONS.values()], ids=["readable", *ENGINE_OPTIONS])
@pytest.mark.parametrize("per_process, words", PROPERTY_MISTAKES, ids=[m[0].__name__ for m in PROPERTY_MISTAKES])
def test_a_per_process_property_that_reads_past_its_declaration_is_one_line(sabotaged_property, per_process, words,
                                                                            options):
    from protocol.model.next import model_for

    sabotaged_property(per_process)
    named = lookup("HoldsRouted").with_constants({"MaxTime": 1})
    with pytest.raises(ModelError) as refused:
        if options:
            check(named, **options)
        else:
            model = model_for(named.config)
            explore(model.initial_states, model.successors, model.invariants, model.transition_properties)
    assert words in str(refused.value) and "\n" not in str(refused.value)


# A cluster's partitions (`check --cluster`), forked here as Ray's actors would run them: the
# packed engine's and the vector engine's, each in two worker processes.
CLUSTER_OPTIONS = {"cluster-packed": dict(engine="packed", workers=2, partitioned=True),
                   "cluster-vector": dict(engine="vector", workers=2, partitioned=True)}


@pytest.mark.slow  # starts worker processes
@pytest.mark.parametrize("options", CLUSTER_OPTIONS.values(), ids=list(CLUSTER_OPTIONS))
@pytest.mark.parametrize("step, words", PROTOCOL_MISTAKES, ids=[m[0].__name__ for m in PROTOCOL_MISTAKES])
def test_a_cluster_s_partitions_refuse_a_step_past_its_footprint_in_one_line(sabotaged, step, words, options):
    sabotaged(step)
    with pytest.raises(ModelError) as refused:
        check(lookup("Holds").with_constants({"MaxTime": 1}), **options)
    assert words in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.slow  # starts worker processes
@pytest.mark.parametrize("options", CLUSTER_OPTIONS.values(), ids=list(CLUSTER_OPTIONS))
@pytest.mark.parametrize("per_process, words", PROPERTY_MISTAKES, ids=[m[0].__name__ for m in PROPERTY_MISTAKES])
def test_a_cluster_s_partitions_refuse_a_property_past_its_declaration_in_one_line(sabotaged_property, per_process,
                                                                                  words, options):
    sabotaged_property(per_process)
    with pytest.raises(ModelError) as refused:
        check(lookup("HoldsRouted").with_constants({"MaxTime": 1}), **options)
    assert words in str(refused.value) and "\n" not in str(refused.value)
