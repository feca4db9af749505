"""A log at whose end several states fit says which variables differ there and in how many
values (`open_at_end`, in the note and in --json), the same from either search, so that
whoever records the run knows what to observe to pin its end down."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from protocol.tools import factored
from protocol.tools.bench import walk_log
from protocol.tools.log import parse
from protocol.tools.log_engine import SHOWN_OPEN, ending_note, open_at_end
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
    validation = validate(parse(text))
    assert validation.open_at_end["upper"] == values
    assert f"they differ in upper ({values:,} values)" in ending(validation), validation.notes


@pytest.mark.parametrize("seed", [1, 7])
def test_both_searches_say_the_same_of_the_end(seed, monkeypatch):
    text = walked(seed)
    by_components = validate(parse(text))

    def undecided(*args, **kwargs):
        raise factored.Exact("the exact search, for the comparison")

    monkeypatch.setattr(factored, "follow", undecided)
    exact = validate(parse(text))
    assert ending(exact) == ending(by_components) and exact.open_at_end == by_components.open_at_end
    assert any(name.startswith("since[") for name in exact.open_at_end)  # a process's locals are named with it


def engine_of(globals_: list[tuple], locals_: list[tuple]) -> SimpleNamespace:
    return SimpleNamespace(global_names=[f"g{i}" for i in range(len(globals_[0]))], globals=globals_,
                           local_names=[f"l{i}" for i in range(len(locals_[0]))], locals=locals_)


def test_one_state_reached_by_several_behaviours_names_no_variable():
    engine = engine_of([(0, 0)], [(0,)])
    assert open_at_end(engine, {0}, [{0}, {0}]) == {}
    note = ending_note(1, {})
    assert "differ" not in note and "leave a choice" in note


def test_past_the_variables_shown_the_rest_are_counted():
    width = SHOWN_OPEN + 2
    engine = engine_of([(0,) * width, (1,) * width], [(0,)])
    open_ = open_at_end(engine, {0, 1}, [{0}])
    assert open_ == {f"g{i}": 2 for i in range(width)}
    note = ending_note(2, open_)
    shown = [f"g{i} (2 values)" for i in range(SHOWN_OPEN - 1)]
    assert all(name in note for name in shown) and f"g{SHOWN_OPEN - 1} " not in note
    assert f"and {width - SHOWN_OPEN + 1} more variables" in note


def test_json_says_what_is_open_at_the_end(tmp_path):
    """--json carries it as data: {"upper": n} on an open end, {} on a log pinned to one state."""
    from protocol.cli.validate import json_record

    text = walked(2)
    path = tmp_path / "run.jsonl"
    path.write_text(text)
    record = json_record(validate(parse(text)), str(path))
    assert record["open_at_end"]["upper"] == MAX_TIME - last_upper(text) + 1
    pinned = walk_log("Holds", {"P": 2, "D": 4, "MaxTime": MAX_TIME}, 70, 2, [])
    assert json_record(validate(parse(pinned)), str(path))["open_at_end"] == {}
