"""Hand-built states and shared, memoized checks for the tests.

Hand-built states start from the spec's initial state and override only the
variables a test is about, so each test reads as "the initial state, except".
Checking a named configuration costs seconds; `checked` runs each one once per
test session, so the refutation and CLI tests share the explorations.
"""

from __future__ import annotations

import inspect
import signal
from functools import lru_cache

import attrs
import pytest

import protocol.run

from protocol.model.config import SWITCHES, Config
from protocol.configurations.named import lookup
from protocol.run import check
from protocol.model.commands import ACQUIRE, COMPACT, CREATE, DROP, RELEASE
from protocol.model.state import State, initial


def state(cfg: Config, **overrides) -> State:
    """The initial state of `cfg` with `overrides` (variable name -> full value)."""
    return initial(cfg)._replace(**overrides)


def per_process(cfg: Config, default, **at) -> tuple:
    """A per-process value: `default` everywhere except `p0=..., p1=...`."""
    values = [default] * cfg.P
    for key, value in at.items():
        values[int(key[1:])] = value
    return tuple(values)


def Create(d, t):  # noqa: N802 - named as the spec's commands
    return (CREATE, d, t)


def Drop(d):  # noqa: N802
    return (DROP, d)


def Compact(f):  # noqa: N802
    return (COMPACT, f)


def Acquire(d, t):  # noqa: N802
    return (ACQUIRE, d, t)


def Release(d):  # noqa: N802
    return (RELEASE, d)


def checked(name: str, max_states: int | None = None, stop_on_violation: bool = False, **constants):
    """The CheckResult of the named configuration, explored once per session."""
    named = lookup(name).with_constants(constants)
    return cached_check(named, max_states=max_states, stop_on_violation=stop_on_violation)


@lru_cache(maxsize=None)
def _checked_named(named, every_field: tuple, actions: tuple, options: tuple):
    return check(named, **dict(options))


def cached_check(named, *, on_progress=None, **options):
    """A drop-in for protocol.run.check that reuses explorations within the session.

    The key is everything the result depends on: each field of `named` (its equality
    leaves out the pinned figures and the vacuity lists a test may change), the model's
    actions (a test that replaces one gets its own exploration), and the options other
    than check's defaults (the CLI passes them all, a test none: one exploration).
    A test that changes the model some other way calls protocol.run.check itself.
    """
    from protocol.model import actions

    every_field = tuple(repr(getattr(named, field.name)) for field in attrs.fields(type(named)))
    given = tuple(sorted((key, value) for key, value in options.items() if value != CHECK_DEFAULTS.get(key, ...)))
    return _checked_named(named, every_field, actions.ACTIONS, given)


CHECK_DEFAULTS = {name: parameter.default for name, parameter in inspect.signature(check).parameters.items()
                  if parameter.default is not inspect.Parameter.empty}


@lru_cache(maxsize=None)
def generated(name: str):
    """The Coverage `generate` makes for the named configuration, made once per session."""
    from protocol.tools.generate import generate

    return generate(lookup(name))


@pytest.fixture
def cli(monkeypatch, capsys):
    """Run `protocol ARGV...` in-process, explorations memoized: (exit code, stdout, stderr).

    A wide console, so that no verdict is wrapped or cut in a narrow column.
    """
    from protocol.cli import main

    monkeypatch.setattr(protocol.run, "check", cached_check)
    monkeypatch.setenv("COLUMNS", "200")

    def run(*argv):
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


# ------------------------------------------------------------ switch combinations


def switch_values() -> dict:
    """Each declared switch -> its values, read from SWITCHES now (a test may add a switch)."""
    return {switch_name: switch.values for switch_name, switch in SWITCHES.items()}


def combination_id(switches: dict) -> str:
    return "-".join(f"{name}={value}" for name, value in switches.items())


def replace_action(monkeypatch, name: str, step) -> None:
    """The model with action `name`'s step function replaced (for a sabotaged variant),
    its parameters, fairness and footprint kept: model_for reads actions.ACTIONS when called."""
    import attrs

    from protocol.model import actions

    monkeypatch.setattr(actions, "ACTIONS", tuple(
        attrs.evolve(action, step=step) if action.name == name else action for action in actions.ACTIONS))


def publish_blind_to_standing(s, cfg, p):
    """Publish, reading every standing hold as its initial 0: since never rises
    (a sabotaged action for `replace_action`: compaction stalls under fairness)."""
    from protocol.model import actions

    after = actions.publish(s._replace(standing=(0,) * len(s.standing)), cfg, p)
    return None if after is None else after._replace(standing=s.standing)


def ctrl_c_reaches_it() -> None:
    """For a child a test will interrupt (subprocess's preexec_fn): Ctrl-C at its default.
    A shell without job control starts background commands with SIGINT ignored, and
    Python then installs no handler for it: run from such a job, an interrupted
    child would never see the Ctrl-C the test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# What each engine option of `protocol.run.check` is asked for (the readable search is what they
# are held to, where a test compares).
ENGINE_OPTIONS = {
    "packed": dict(engine="packed"),
    "vector": dict(engine="vector"),
    "packed-symmetry": dict(engine="packed", symmetry=True),
    "vector-symmetry": dict(engine="vector", symmetry=True),
    "fingerprints": dict(engine="packed", fingerprints=True, liveness=False),
    "packed-workers": dict(engine="packed", workers=2),
    "vector-workers": dict(engine="vector", workers=2),
}
