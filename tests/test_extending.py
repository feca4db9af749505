"""docs/extending.md runs: its worked example adds a whole mechanism from inside a test.

Each code block of the walk-through names, on its first line, the file it goes
into and, for a declaration, the registry it joins
(`# protocol/actions.py, in ACTIONS`). `apply_walkthrough` applies every block
to the module it names, as editing that file would, but through pytest's
monkeypatch, so every module is as it was when the test ends. The tests then
check that the watermark mechanism is explored, counted, narrated and exported
like any other, and that without its switch nothing changes.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
import textwrap
import tomllib
import types
from pathlib import Path
from typing import NamedTuple

import pytest

import invariants
import refutations
from protocol import commands, config, events, model, state
from protocol.engine.checker import explore
from protocol.export import trace_markdown, trace_mermaid
from protocol.itf import from_itf, trace_itf
from protocol.narrate import story
from protocol.run import check

WALKTHROUGH = Path(__file__).resolve().parent.parent / "docs" / "extending.md"
FENCE = re.compile(r"^```(?:python|toml)\n(.*?)^```", re.S | re.M)
HEAD = re.compile(r"# (?P<path>[\w/]+\.(?:py|toml))(?:, in (?P<registry>\w+))?\n")


class Block(NamedTuple):
    path: str  # the file the block goes into
    registry: str | None  # the registry it joins; None: it is module code
    code: str


def walkthrough_blocks() -> list[Block]:
    """The code blocks of docs/extending.md that name their file, in the page's order."""
    found = []
    for text in FENCE.findall(WALKTHROUGH.read_text()):
        head = HEAD.match(text)
        if head:
            found.append(Block(head["path"], head["registry"], text[head.end():]))
    return found


# ------------------------------------------------------------ applying a block


def module_of(path: str, monkeypatch) -> types.ModuleType:
    """The module a path names, made empty (and registered for the test) if no file has it yet."""
    name = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    if name in sys.modules or importlib.util.find_spec(name) is not None:
        return importlib.import_module(name)
    module = types.ModuleType(name)
    module.__package__ = name.rpartition(".")[0]
    monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(sys.modules[module.__package__], name.rpartition(".")[2], module, raising=False)
    return module


def apply_code(module, code: str, path: str, monkeypatch) -> None:
    """Run `code` in `module`, then redo through monkeypatch every name it bound and every
    registry entry it added (a decorator's), so that the test's end undoes them."""
    namespace = vars(module)
    before = dict(namespace)
    registries = {key: dict(value) for key, value in before.items() if isinstance(value, dict)}
    try:
        exec(compile(code, path, "exec"), namespace)
    finally:  # even a block that fails half-way leaves nothing behind the test's end
        redo_through(monkeypatch, module, before, registries)


def redo_through(monkeypatch, module, before: dict, registries: dict) -> None:
    """Put back what `module` had, then make each change again through monkeypatch."""
    namespace = vars(module)
    for key, value in list(namespace.items()):
        if key in before and value is before[key]:
            continue
        if key in before:
            namespace[key] = before[key]
        else:
            del namespace[key]
        monkeypatch.setattr(module, key, value, raising=False)
    for key, old in registries.items():
        registry = before[key]
        added = {k: v for k, v in registry.items() if k not in old or old[k] is not v}
        for k, v in added.items():
            if k in old:
                registry[k] = old[k]
            else:
                del registry[k]
            monkeypatch.setitem(registry, k, v)


def apply_declaration(module, registry_name: str, code: str, monkeypatch) -> None:
    """Add the declaration `code` to `registry_name` of `module`: a tuple's elements, a
    dict's entries (declarations keyed by their name), or a field of an attrs class."""
    registry, namespace = getattr(module, registry_name), vars(module)
    if isinstance(registry, tuple):
        monkeypatch.setattr(module, registry_name, registry + eval(f"({code})", namespace))
    elif isinstance(registry, dict):
        entries = eval(f"{{{code}}}", namespace)
        if not isinstance(entries, dict):
            entries = {declared.name: declared for declared in entries}
        for key, value in entries.items():
            monkeypatch.setitem(registry, key, value)
    else:  # a class: the same class with one more field, as adding the line to its body gives
        scope = dict(namespace)
        exec(f"@attrs.frozen\nclass {registry_name}({registry_name}):\n" + textwrap.indent(code, "    "), scope)
        monkeypatch.setattr(module, registry_name, scope[registry_name])


def apply_manifest(code: str, monkeypatch) -> None:
    tables = {**refutations.manifest(), **tomllib.loads(code)}
    monkeypatch.setattr(refutations, "manifest", lambda: tables)


def apply_walkthrough(monkeypatch) -> list[Block]:
    blocks = walkthrough_blocks()
    monkeypatch.setattr(events, "EVENT_KINDS", dict(events.EVENT_KINDS))  # the new kinds go into a copy
    for block in blocks:
        if block.path.endswith(".toml"):
            apply_manifest(block.code, monkeypatch)
        elif block.registry is None:
            apply_code(module_of(block.path, monkeypatch), block.code, block.path, monkeypatch)
        else:
            apply_declaration(module_of(block.path, monkeypatch), block.registry, block.code, monkeypatch)
    return blocks  # nothing to re-derive: every view of the registries is derived when asked for


@pytest.fixture
def watermark(monkeypatch):
    return apply_walkthrough(monkeypatch)


SMALL = dict(P=1, D=1, MaxTime=1)


# ------------------------------------------------------------------ the tests


def test_the_walkthrough_puts_each_piece_in_the_registry_that_owns_it():
    places = {(block.path, block.registry) for block in walkthrough_blocks()}
    assert places >= {
        ("protocol/config.py", "SWITCHES"), ("protocol/config.py", "Config"),
        ("protocol/state.py", "VARIABLES"), ("protocol/commands.py", "KINDS"),
        ("protocol/actions.py", None), ("protocol/actions.py", "MAINTENANCE_EFFECTS"),
        ("protocol/actions.py", "ACTIONS"), ("invariants/__init__.py", "PROPERTIES"),
        ("refutations/manifest.toml", None),
    }


def test_applying_the_walkthrough_leaves_every_module_as_it_was_afterwards():
    with pytest.MonkeyPatch.context() as patch:
        apply_walkthrough(patch)
        assert "mark" in state.State._fields and "Stamped" in events.EVENT_KINDS and "Mark" in commands.KINDS
    assert "mark" not in state.State._fields and "mark" not in state.BY_NAME
    assert "Stamped" not in events.EVENT_KINDS and "Stamp" not in model.BY_NAME and "Mark" not in commands.KINDS
    assert "watermark" not in config.SWITCHES and not hasattr(config.Config(), "watermark")
    assert "MarkLeUpper" not in invariants.BY_NAME and "invariants.watermark" not in sys.modules


def test_without_its_switch_the_mechanism_changes_no_count(monkeypatch):
    before = check(config.NamedConfig("Small", config.Config(**SMALL)))
    apply_walkthrough(monkeypatch)
    after = check(config.NamedConfig("Small", config.Config(**SMALL)))
    assert (after.distinct_states, after.transitions, after.depth) == \
        (before.distinct_states, before.transitions, before.depth)
    assert after.properties.keys() == before.properties.keys()
    assert "MarkLeUpper" not in invariants.names_for(config.Config())


def test_the_completeness_checks_find_every_piece_of_the_new_mechanism(watermark):
    from test_declarations import missing_pieces_of_commands, records
    from test_events import missing_pieces_of_events, recorded_kinds

    assert {"Stamped", "MarkRaised"} <= set(events.EVENT_KINDS) and records(model.BY_NAME["Stamp"].step)
    assert missing_pieces_of_commands() == missing_pieces_of_events() == []
    kinds, silent = recorded_kinds(config.lookup("HoldsWatermarkFromPolicy").config)
    assert {"Stamped", "MarkRaised"} <= kinds and silent == []


def test_the_checker_explores_and_counts_the_watermark_as_the_manifest_pins(watermark):
    named = config.lookup("HoldsWatermark")
    result = check(named)
    assert result.mismatches() == []
    assert result.properties["MarkLeUpper"].holds is True
    assert (result.distinct_states, result.depth) == named.pinned
    # The plain breadth-first search over the readable model agrees with the packed engine.
    readable = model.model_for(named.config)
    plain = explore(readable.initial_states, readable.successors, readable.invariants)
    assert (len(plain.states), plain.depth) == named.pinned
    assert max(s.mark[0] for s in plain.states) == 1  # the watermark rises


def test_the_refutation_fails_as_the_manifest_says_and_is_narrated_and_exported(watermark):
    named = config.lookup("HoldsWatermarkFromPolicy")
    assert named.doc.startswith("Stamping the watermark from the controller's compaction policy")
    result = check(named)
    assert result.mismatches() == []
    assert (result.distinct_states, result.depth) == named.pinned
    trace = result.violation("MarkLeUpper")
    assert [str(step.action) for step in trace.steps[1:]][-2:] == ["Stamp(0)", "MaintStep(0)"]

    told = story(trace, named.config)
    assert "the multiplexer stamps Mark(1) on process 0's maintenance stream" in told.steps[-2].words
    assert "applies Mark(1): its watermark rises to 1" in told.steps[-1].words
    assert told.violation == ["mark[0] = 1 is beyond upper = 0"]
    assert "mark[0] = 1 is beyond upper = 0" in trace_markdown(trace, named.config)
    assert "multiplexer-)maint0: Mark(1)" in trace_mermaid(trace, named.config)

    document = trace_itf(trace)
    assert "mark" in document["vars"]
    queued = [c for s in document["states"] for _, queue in s["mq"]["#map"] for c in queue]
    assert {"tag": "Mark", "value": {"t": 1}} in queued
    assert from_itf(json.dumps(document)) == trace


def test_type_ok_and_no_regression_take_the_new_variable_from_the_schema(watermark):
    cfg = config.lookup("HoldsWatermark").config
    start = state.initial(cfg)
    assert start.mark == (0,) * cfg.P
    fallen = start._replace(mark=(1,)), start
    assert invariants.no_regression_witnesses(*fallen, cfg) == ["mark[0] fell from 1 to 0"]
    beyond = start._replace(mark=(cfg.MaxTime + 1,))
    assert not invariants.type_ok(beyond, cfg)
    assert invariants.type_ok_witnesses(beyond, cfg) == [f"mark[0] = {cfg.MaxTime + 1} is not a time 0..{cfg.MaxTime}"]
