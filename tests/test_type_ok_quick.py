"""TypeOK's quick tests (each domain's `accepts`) never accept what the domain's exact
test (`problem`) refuses, so the quick path cannot hide a state outside its domain; and
on the states a search makes they answer alone, or the speed they exist for is lost.
"""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given, settings, strategies as st

from protocol.model import state as schema
from protocol.model.commands import KINDS
from protocol.model.config import Config
from protocol.configurations.named import named_configurations
from protocol.properties.type_ok import type_ok, type_ok_witnesses
from protocol.run import explore_config

CONFIGS = [Config()] + [named.config for named in named_configurations().values()]
type_ok_module = importlib.import_module("protocol.properties.type_ok")  # the package exports the function
DOMAINS = sorted({type(variable.domain).__name__: variable.domain for variable in schema.VARIABLES}.items())


def odd_values(depth: int = 2):
    """Values near and across every domain's edges: small ints, bools, ⊥, None, text,
    tuples, sets and commands, nested."""
    leaves = st.one_of(st.integers(-2, 4), st.booleans(), st.none(), st.sampled_from(["X", "Create", ""]))
    commands = st.builds(lambda kind, args: (kind, *args), st.sampled_from(sorted(KINDS)),
                         st.lists(st.one_of(st.integers(-1, 4), st.booleans()), max_size=3))
    if depth == 0:
        return st.one_of(leaves, commands)
    inner = odd_values(depth - 1)
    return st.one_of(leaves, commands, st.tuples(inner), st.tuples(inner, inner), st.tuples(inner, inner, inner),
                     st.frozensets(st.one_of(st.integers(-1, 3), st.booleans()), max_size=3))


def quick_refuted_soundness(domain, cfg, value) -> bool:
    """Whether the quick test of `domain` keeps its promise on `value`."""
    return not domain.accepts(cfg)(value) or domain.problem(value, cfg) is None


@settings(max_examples=300)
@given(domain=st.sampled_from(DOMAINS), cfg=st.sampled_from(CONFIGS), value=odd_values())
def test_a_quick_test_never_accepts_what_the_exact_one_refuses(domain, cfg, value):
    name, domain = domain
    assert quick_refuted_soundness(domain, cfg, value), f"{name}.accepts takes {value!r}, which problem refuses"


def test_a_quick_test_that_accepts_too_much_is_caught():
    """The property above can fail: a time that takes MaxTime + 1."""
    loose = schema.Time()
    loose.accepts = lambda cfg: lambda value: type(value) is int and 0 <= value <= cfg.MaxTime + 1
    cfg = Config()
    assert not quick_refuted_soundness(loose, cfg, cfg.MaxTime + 1)


def states_of(name: str) -> list:
    return list(explore_config(named_configurations()[name].config).decoded_states())


@pytest.mark.parametrize("name", ["HoldsRouted", "TlaHoldsRouted", "HoldsCapReconnect"])
def test_on_reachable_states_and_their_mutants_type_ok_is_its_witnesses(name):
    """The quick and exact paths agree: a reachable state passes both, and each state with
    one per-process entry set out of range fails both."""
    cfg = named_configurations()[name].config
    for s in states_of(name)[::50]:
        assert type_ok(s, cfg) and not type_ok_witnesses(s, cfg)
        for variable in schema.VARIABLES:
            if variable.scope == schema.PROCESS and getattr(s, variable.name)[0] is not None:
                broken = s._replace(**{variable.name: (cfg.MaxTime + 7,) + getattr(s, variable.name)[1:]})
                assert not type_ok(broken, cfg) and type_ok_witnesses(broken, cfg), variable.name


@pytest.mark.parametrize("name", ["HoldsRouted", "TlaHoldsRouted", "HoldsCapReconnect"])
def test_the_quick_tests_alone_accept_every_reachable_state(name, monkeypatch):
    """Where a quick test says no, TypeOK asks the exact test: on reachable states it never
    has to, or TypeOK is as slow as before the quick tests."""
    cfg = named_configurations()[name].config
    states = states_of(name)
    asked = []
    monkeypatch.setattr(type_ok_module, "_variable_ok", lambda value, variable, cfg: asked.append(variable.name))
    assert all(type_ok(s, cfg) for s in states)
    assert asked == []


def test_the_exact_test_is_asked_where_a_quick_one_says_no(monkeypatch):
    """The test above can fail: a writer at ⊥ where the configuration has no ⊥."""
    cfg = Config()
    asked = []
    monkeypatch.setattr(type_ok_module, "_variable_ok", lambda value, variable, cfg: asked.append(variable.name))
    type_ok(schema.initial(cfg)._replace(writer=(schema.BOTTOM,) * cfg.P), cfg)
    assert asked == ["writer"]


def test_a_value_accepted_once_is_remembered_by_identity_not_equality():
    """The quick tests remember what they accepted (a search checks states that share most
    values), but by identity: as_of = (False, ...) equals (0, ...) and hashes alike, yet
    TypeOK refuses it after accepting the other, and refuses it again."""
    cfg = Config()
    ints = schema.initial(cfg)._replace(as_of=(0,) * cfg.D)
    bools = ints._replace(as_of=(False,) * cfg.D)
    assert ints.as_of == bools.as_of
    assert type_ok(ints, cfg) and type_ok(ints, cfg)
    assert not type_ok(bools, cfg) and not type_ok(bools, cfg)
    assert type_ok_witnesses(bools, cfg)


def test_a_remembered_test_asks_once_per_value_and_forgets_past_its_bound(monkeypatch):
    """The test itself is asked once per value object while it is remembered; an equal
    object is asked again; past REMEMBERED values the memory starts again."""
    monkeypatch.setattr(type_ok_module, "REMEMBERED", 3)
    asked = []
    remembered = type_ok_module._remembered(lambda value: asked.append(value) or True)
    value, equal = (1, 2), tuple([1, 2])
    assert value is not equal
    assert remembered(value) and remembered(value) and remembered(equal)
    assert asked == [value, equal]
    for other in ((3,), (4,)):
        remembered(other)
    remembered(value)  # the fourth value cleared the memory: asked again
    assert asked == [value, equal, (3,), (4,), value]


def test_none_is_not_remembered_before_it_is_accepted():
    """A remembered test must not take a missing entry for None: physical = (0, None) is
    refused at every ask."""
    cfg = Config()
    s = schema.initial(cfg)._replace(physical=(0, None))
    assert not type_ok(s, cfg) and not type_ok(s, cfg)
