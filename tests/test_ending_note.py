"""A log at whose end several states fit says which variables differ there and in how many
values (`ending_note`), the same from either search, so that whoever records the run knows
what to observe to pin its end down."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from protocol.tools import factored
from protocol.tools.bench import walk_log
from protocol.tools.log import parse
from protocol.tools.log_engine import SHOWN_OPEN, ending_note
from protocol.tools.validate import validate

MAX_TIME = 30


def walked(seed: int) -> str:
    """A seeded run of Holds written as a log, Publish and Ingest declared silent: after the
    last `upper` it shows, a silent Ingest may have taken upper anywhere up to MaxTime."""
    return walk_log("Holds", {"P": 2, "D": 4, "MaxTime": MAX_TIME}, 70, seed, ["Publish", "Ingest"])


def last_upper(text: str) -> int:
    observed = [json.loads(line)["observe"]["upper"] for line in text.splitlines()[1:]
                if '"upper"' in line and "observe" in json.loads(line)]
    return observed[-1]


def ending(validation) -> str:
    return next(note for note in validation.notes if "fit the log at its end" in note)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_end_names_upper_with_every_value_left_to_it(seed):
    text = walked(seed)
    values = MAX_TIME - last_upper(text) + 1
    assert values > 1, "the run ends at MaxTime: nothing is left open"
    note = ending(validate(parse(text)))
    assert f"they differ in upper ({values:,} values)" in note, note


@pytest.mark.parametrize("seed", [1, 7])
def test_both_searches_say_the_same_of_the_end(seed, monkeypatch):
    text = walked(seed)
    by_components = ending(validate(parse(text)))

    def undecided(*args, **kwargs):
        raise factored.Exact("the exact search, for the comparison")

    monkeypatch.setattr(factored, "follow", undecided)
    exact = ending(validate(parse(text)))
    assert exact == by_components
    assert "since[" in exact and "physical[" in exact  # a process's locals are named with it


def engine_of(globals_: list[tuple], locals_: list[tuple]) -> SimpleNamespace:
    return SimpleNamespace(global_names=[f"g{i}" for i in range(len(globals_[0]))], globals=globals_,
                           local_names=[f"l{i}" for i in range(len(locals_[0]))], locals=locals_)


def test_one_state_reached_by_several_behaviours_names_no_variable():
    engine = engine_of([(0, 0)], [(0,)])
    note = ending_note(engine, 1, {0}, [{0}, {0}])
    assert "differ" not in note and "leave a choice" in note


def test_past_the_variables_shown_the_rest_are_counted():
    width = SHOWN_OPEN + 2
    engine = engine_of([(0,) * width, (1,) * width], [(0,)])
    note = ending_note(engine, 2, {0, 1}, [{0}])
    shown = [f"g{i} (2 values)" for i in range(SHOWN_OPEN - 1)]
    assert all(name in note for name in shown) and f"g{SHOWN_OPEN - 1} " not in note
    assert f"and {width - SHOWN_OPEN + 1} more variables" in note
