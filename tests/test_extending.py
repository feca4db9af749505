"""docs/extending.md runs: its walk-through adds a whole mechanism from inside a test.

Each code block of the walk-through names, on its first line, the file it goes
into and where in it: `# protocol/model/actions.py, in ACTIONS` (a declaration joining
a registry), `# protocol/model/actions.py, at the end of inter_create` (lines added
before the function's last `return`), `# protocol/model/actions.py` (code of the
module's own). `apply_walkthrough` applies every block where it says, as
editing that file would: the modules through pytest's monkeypatch (so every
module is as it was when the test ends), the manifest as a copy in a temporary
directory. The tests then count the files a contributor writes, run what the
page says to run (`pin`, what `docs --write` derives, `check`), and check that
the wakeup mechanism is explored, counted, narrated and exported like any other,
that its liveness property is not vacuous where it must hold, and that without
its switch nothing changes.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import json
import re
import sys
import textwrap
import types
from pathlib import Path
from typing import NamedTuple

import attrs
import pytest

from protocol import properties as props
from protocol import configurations as configs
from protocol.model import actions
from protocol.model import commands
from protocol.configurations import named as named_configs
from protocol.model import config
from protocol.apps import docs
from protocol.model import events
from protocol.model import next as model
from protocol.model import state
from protocol.cli import main
from protocol.engine import LOCAL, Footprint, ModelError
from protocol.engine.checker import explore
from protocol.render.export import trace_markdown, trace_mermaid
from protocol.configurations.golden import golden_text
from protocol.tools.itf import from_itf, trace_itf
from protocol.render.narrate import story
from protocol.run import check

ROOT = Path(__file__).resolve().parent.parent
WALKTHROUGH = ROOT / "docs" / "extending.md"
FENCE = re.compile(r"^```(?:python|toml)\n(.*?)^```", re.S | re.M)
HEAD = re.compile(r"# (?P<path>[\w/]+\.(?:py|toml))(?:, (?:in (?P<registry>\w+)|at the end of (?P<function>\w+)))?\n")

# The files the issue says a new mechanism must never need written by hand: the
# tests' stand-ins and the docs tool take what they need from the declarations.
NEVER_BY_HAND = {"tests/conftest.py", "tests/test_matrix.py", "tests/test_symmetry.py", "protocol/apps/docs.py"}
MOST_FILES_BY_HAND = 9


class Block(NamedTuple):
    path: str  # the file the block goes into
    registry: str | None  # the registry it joins
    function: str | None  # the function whose end it extends
    code: str


# The headings of the walk-throughs after the first, in the page's order: part 2 is the
# first of them (a reader's restart), part 3 the second (a peer hold).
LATER = ("## A second walk-through", "## A third walk-through")


def walkthrough_text(part: int = 1) -> str:
    """The page's walk-through `part` (1: the wakeup): from its heading to the next `## `."""
    text = WALKTHROUGH.read_text()
    if part == 1:
        return text.split(LATER[0], 1)[0]
    return text.split(LATER[part - 2], 1)[1].split("\n## ", 1)[0]


def walkthrough_blocks(part: int = 1) -> list[Block]:
    """The code blocks of one walk-through that name their file, in the page's order."""
    found = []
    for text in FENCE.findall(walkthrough_text(part)):
        head = HEAD.match(text)
        if head:
            found.append(Block(head["path"], head["registry"], head["function"], text[head.end():]))
    return found


def files_written_by_hand(part: int = 1) -> list[str]:
    return sorted({block.path for block in walkthrough_blocks(part)})


def files_the_page_lists(part: int = 1) -> list[str]:
    """The 'file you write' column of the walk-through's table of steps."""
    table = walkthrough_text(part).split("| step | file you write |")[1].split("\n\n")[0]
    return sorted(re.findall(r"^\| \d+ \| `([^`]+)` \|", table, re.M))


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
    registry entry it added (a decorator's), so that the test's end undoes them. A function
    the code redefines is redefined in the registries that name it too, as editing its body
    in place would be."""
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
    rebound = {}
    for key, value in list(namespace.items()):
        if key in before and value is before[key]:
            continue
        if key in before:
            namespace[key] = before[key]
            rebound[id(before[key])] = value
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
        for k, v in old.items():
            if id(v) in rebound:
                monkeypatch.setitem(registry, k, rebound[id(v)])


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


def at_the_end_of(module, function: str, code: str) -> str:
    """The source of `module.function` with `code` added before its last `return`."""
    lines = inspect.getsource(getattr(module, function)).splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if line.lstrip().startswith("return"))
    indent = lines[last][:len(lines[last]) - len(lines[last].lstrip())]
    return "".join(lines[:last]) + textwrap.indent(code, indent) + "".join(lines[last:])


class Walkthrough(NamedTuple):
    blocks: list[Block]
    root: Path  # a directory holding the manifest as the walk-through leaves it


def apply_walkthrough(monkeypatch, root: Path, part: int = 1) -> Walkthrough:
    blocks = walkthrough_blocks(part)
    monkeypatch.setattr(events, "EVENT_KINDS", dict(events.EVENT_KINDS))  # the new kinds go into a copy
    (root / "refutations").mkdir(parents=True, exist_ok=True)
    manifest = root / "refutations" / "manifest.toml"
    manifest.write_text(configs.manifest_path().read_text())
    for block in blocks:
        if block.path.endswith(".toml"):
            manifest.write_text(manifest.read_text() + "\n" + block.code)
        elif block.function is not None:
            module = module_of(block.path, monkeypatch)
            source = at_the_end_of(module, block.function, block.code)
            apply_code(module, source, block.path, monkeypatch)
        elif block.registry is None:
            apply_code(module_of(block.path, monkeypatch), block.code, block.path, monkeypatch)
        else:
            apply_declaration(module_of(block.path, monkeypatch), block.registry, block.code, monkeypatch)
    monkeypatch.setenv(configs.MANIFEST_ENV, str(manifest))  # read again: another manifest
    return Walkthrough(blocks, root)


# ------------------------------------------------- what every walk-through's test shares


def assert_written_by_hand(part: int, most: int) -> None:
    """Walk-through `part` touches at most `most` files by hand, none under tests/ and no page,
    and its table of steps names exactly those."""
    written = files_written_by_hand(part)
    assert len(written) <= most, written
    assert not [path for path in written if path.startswith("tests/") or path.endswith(".md")]
    assert written == files_the_page_lists(part)


def switch_value_refusal(root: Path, given: str, wrong: str) -> str:
    """The one line `named_configurations` refuses the walk-through's manifest with, once the
    switch setting `given` (`wakeup = "upper"`) is given the value `wrong` instead."""
    manifest = root / "refutations" / "manifest.toml"
    manifest.write_text(manifest.read_text().replace(given, f'{given.split(" = ")[0]} = "{wrong}"'))
    with pytest.raises(config.ConfigError) as refused:
        named_configs.named_configurations()
    assert "\n" not in str(refused.value)
    return str(refused.value)


@functools.cache
def readable_counts(cfg) -> tuple[int, int]:
    """The plain breadth-first search's distinct states and depth over the readable model."""
    readable = model.model_for(cfg)
    plain = explore(readable.initial_states, readable.successors, readable.invariants)
    return len(plain.states), plain.depth


SLOW = pytest.mark.slow
# Every engine option a walk-through's configurations are counted with, against readable_counts.
ENGINES = [
    dict(engine="packed"), dict(engine="vector"),
    pytest.param(dict(engine="packed", symmetry=True), marks=SLOW),
    pytest.param(dict(engine="vector", symmetry=True), marks=SLOW),
    pytest.param(dict(engine="packed", fingerprints=True, liveness=False), marks=SLOW),
    pytest.param(dict(engine="packed", workers=2), marks=SLOW),
    pytest.param(dict(engine="vector", workers=2), marks=SLOW),
]


def engine_ids(options: dict) -> str:
    return "-".join(f"{key}={value}" for key, value in options.items())


@pytest.fixture
def wakeup(monkeypatch, tmp_path):
    return apply_walkthrough(monkeypatch, tmp_path)


PIN = ["pin", "HoldsWakeup", "HoldsWakeupOnSince"]
PINNED_FROM: dict[bytes, tuple[bytes, str]] = {}  # the manifest pin read -> (what it wrote, what it printed)


@pytest.fixture
def pinned(wakeup, capsys):
    """The walk-through's first command: `pin` writes the new configurations' figures.

    Pin explores both new configurations; from the same manifest and walk-through it
    writes the same figures, so it runs once per session and the other tests start
    from the manifest it wrote."""
    manifest = wakeup.root / "refutations" / "manifest.toml"
    before = manifest.read_bytes()
    if before not in PINNED_FROM:
        assert main(PIN) == 0
        PINNED_FROM[before] = (manifest.read_bytes(), capsys.readouterr().out)
    after, printed = PINNED_FROM[before]
    manifest.write_bytes(after)
    return printed


SMALL = dict(P=1, D=1, MaxTime=1)
NEW = ("HoldsWakeup", "HoldsWakeupOnSince")


# ------------------------------------------------------------------ the tests


def test_a_contributor_writes_at_most_nine_files_and_none_a_derivation_should_write():
    written = files_written_by_hand()
    assert len(written) <= MOST_FILES_BY_HAND, written
    assert not set(written) & NEVER_BY_HAND
    assert written == files_the_page_lists()  # the page's table of steps names exactly these


def test_a_contributor_writes_no_prose_page_and_none_that_counts():
    # The pages' rows for the new action and property are started by `docs --write`
    # (test_what_docs_write_derives_from_the_walkthrough), so no page is written by hand.
    assert not [path for path in files_written_by_hand() if not path.endswith((".py", ".toml"))]


def test_the_walkthrough_puts_each_piece_where_it_belongs():
    places = {(block.path, block.registry or block.function) for block in walkthrough_blocks()}
    assert places >= {
        ("protocol/model/config.py", "SWITCHES"), ("protocol/model/config.py", "Config"),
        ("protocol/model/state.py", "VARIABLES"), ("protocol/model/actions.py", None),
        ("protocol/model/actions.py", "inter_create"), ("protocol/model/actions.py", "ACTIONS"),
        ("protocol/properties/wakeup.py", None), ("protocol/properties/__init__.py", "PROPERTIES"),
        ("protocol/configurations/manifest.toml", None), ("protocol/configurations/holds_wakeup_on_since.py", None),
    }


def test_applying_the_walkthrough_leaves_every_module_as_it_was_afterwards(tmp_path):
    with pytest.MonkeyPatch.context() as patch:
        apply_walkthrough(patch, tmp_path)
        assert "waiting" in state.State._fields and "PeeksServed" in events.EVENT_KINDS
        assert actions.INTERACTIVE_EFFECTS[commands.CREATE] is actions.inter_create
        assert "PeekWaits" in actions.inter_create.__code__.co_names
    assert "waiting" not in state.State._fields and "waiting" not in state.BY_NAME
    assert "PeeksServed" not in events.EVENT_KINDS and "Serve" not in model.BY_NAME
    assert "PeekWaits" not in actions.INTERACTIVE_EFFECTS[commands.CREATE].__code__.co_names
    assert "wakeup" not in config.SWITCHES and not hasattr(config.Config(), "wakeup")
    assert "WaitingServed" not in props.declared() and "protocol.properties.wakeup" not in sys.modules
    assert "HoldsWakeup" not in named_configs.named_configurations()


def test_without_its_switch_the_mechanism_changes_no_count(monkeypatch, tmp_path):
    before = check(named_configs.NamedConfig("Small", config.Config(**SMALL)))
    apply_walkthrough(monkeypatch, tmp_path)
    after = check(named_configs.NamedConfig("Small", config.Config(**SMALL)))
    assert (after.distinct_states, after.transitions, after.depth) == \
        (before.distinct_states, before.transitions, before.depth)
    assert after.properties.keys() == before.properties.keys()
    assert "WaitingServed" not in props.names_for(config.Config())


def test_a_switch_value_out_of_its_domain_is_refused_in_one_line(wakeup):
    refused = switch_value_refusal(wakeup.root, 'wakeup = "upper"', "sometimes")
    assert "[HoldsWakeup]" in refused and "sometimes" in refused


def test_the_completeness_checks_find_every_piece_of_the_new_mechanism(pinned):
    from test_declarations import missing_pieces_of_commands, records
    from test_events import missing_pieces_of_events, recorded_kinds

    assert {"PeekWaits", "PeeksServed"} <= set(events.EVENT_KINDS) and records(model.BY_NAME["Serve"].step)
    assert missing_pieces_of_commands() == missing_pieces_of_events() == []
    kinds, silent = recorded_kinds(named_configs.lookup("HoldsWakeup").config)
    assert {"PeekWaits", "PeeksServed"} <= kinds and silent == []


def test_pin_writes_the_figures_and_check_is_as_expected_and_not_vacuous(pinned):
    assert [line.split(":")[0] for line in pinned.splitlines()[:2]] == list(NEW)
    named = named_configs.lookup("HoldsWakeup")
    result = check(named)
    assert result.mismatches() == []
    assert (result.distinct_states, result.depth) == named.pinned
    served = result.properties["WaitingServed"]
    assert served.holds is True and served.vacuous is False
    assert all(depth is not None for depth in result.reachable.values())
    # The plain breadth-first search over the readable model agrees with the packed engine.
    readable = model.model_for(named.config)
    plain = explore(readable.initial_states, readable.successors, readable.invariants)
    assert (len(plain.states), plain.depth) == named.pinned
    assert any(s.waiting[0] for s in plain.states) and any(s.readers[0][0] is not None and not s.waiting[0]
                                                          for s in plain.states)  # peeks wait, then are served


def test_the_refutation_fails_as_the_manifest_says_and_is_narrated_and_exported(pinned):
    named = named_configs.lookup("HoldsWakeupOnSince")
    assert named.doc.startswith("Waking a waiting peek on the published since")
    result = check(named)
    assert result.mismatches() == []
    trace = result.violation("WaitingServed")
    assert len(trace.steps) == dict(named.expect)["WaitingServed"] == 4
    assert [str(step.action) for step in trace.steps[1:]] == ["CreatePeek(0, 0)", "Ingest", "InterStep(0)"]

    told = story(trace, named.config)
    assert told.steps[-1].words.endswith("registers a read hold at 0; peek 0 waits to be served")
    assert "waits to be served" in trace_markdown(trace, named.config)
    assert "Create(0, 0)" in trace_mermaid(trace, named.config)
    document = trace_itf(trace)
    assert "waiting" in document["vars"] and from_itf(json.dumps(document)) == trace


def test_what_docs_write_derives_from_the_walkthrough(pinned):
    """The rows of the variable, the action and the property, the last cell of the
    property's row, the golden trace: what the walk-through leaves to `docs --write`."""
    protocol_page = docs.protocol_doc((ROOT / "docs" / "protocol.md").read_text())
    assert re.search(r"^\| `waiting\[p\]` \|.*wait to be served", protocol_page, re.M)
    actions_table = protocol_page.split(docs.ACTIONS_HEADER)[1].split("\n\n")[0]
    assert actions_table.splitlines()[-3:] == [
        "| `Serve(p)` | process p serves every waiting peek whose as_of the frontier it wakes on has passed |",
        "| Compact (sub-step) " + actions_table.split("| Compact (sub-step) ")[1].split("\n")[0],
        "| Forward (sub-step) " + actions_table.split("| Forward (sub-step) ")[1].split("\n")[0],
    ]
    assert docs.protocol_doc(protocol_page) == protocol_page  # a row once there is kept

    properties_path = ROOT / "docs" / "properties.md"
    properties_page = docs.with_quotes(properties_path, docs.with_property_rows(properties_path.read_text()), ROOT)
    row = ("| WaitingServed | liveness, under weak fairness | `waiting_served` in `protocol/properties/wakeup.py` | "
           "`HoldsWakeupOnSince` (lasso of 4) |")
    assert row in properties_page.split(docs.PROPERTIES_HEADER)[1].split("\n\n")[0].splitlines()
    assert "`HoldsWakeup`" in properties_page.split("The configurations expected to violate nothing")[1].split("satisfy")[0]
    reworded = properties_page.replace("| liveness, under weak fairness | `waiting_served`",
                                       "| liveness, under weak fairness; only with `wakeup` | `waiting_served`")
    assert docs.with_quotes(properties_path, docs.with_property_rows(reworded), ROOT) == reworded

    golden = golden_text("HoldsWakeupOnSince", check(named_configs.lookup("HoldsWakeupOnSince")))
    assert "peek 0 waits to be served" in golden and "stutters forever" in golden


def test_a_footprint_too_small_is_one_line_in_the_readable_search_and_every_engine(pinned, monkeypatch):
    serve = model.BY_NAME["Serve"]
    without_upper = attrs.evolve(serve, footprint=lambda cfg, p: Footprint(LOCAL, ("as_of",)))
    monkeypatch.setattr(actions, "ACTIONS", tuple(without_upper if a is serve else a for a in actions.ACTIONS))
    named = named_configs.lookup("HoldsWakeup")
    # Before steps saw only what they declare, the packed engine replayed Serve's memoised
    # effect under other values of upper and counted otherwise, and only a comparison with the
    # readable search, or a sample, caught it. Now the step's view refuses the read, everywhere.
    readable = model.model_for(named.config)
    with pytest.raises(ModelError) as breach:
        explore(readable.initial_states, readable.successors, readable.invariants)
    assert str(breach.value).startswith("Serve(p) reads the global upper outside its footprint")
    for engine in ("packed", "vector"):
        with pytest.raises(ModelError) as breach:
            check(named, liveness=False, engine=engine)
        assert str(breach.value).startswith("Serve(p) reads the global upper outside its footprint")
        assert "\n" not in str(breach.value)


def test_type_ok_takes_the_new_variable_from_the_schema(pinned):
    cfg = named_configs.lookup("HoldsWakeup").config
    start = state.initial(cfg)
    assert start.waiting == (frozenset(),) * cfg.P
    beyond = start._replace(waiting=(frozenset({cfg.D}),))
    assert not props.type_ok(beyond, cfg)
    assert props.type_ok_witnesses(beyond, cfg)


def test_before_its_expect_is_written_check_shows_the_refutation_s_length(pinned, wakeup):
    manifest = wakeup.root / "refutations" / "manifest.toml"
    manifest.write_text(manifest.read_text().replace("expect = { WaitingServed = 4 }\n", ""))
    result = check(named_configs.lookup("HoldsWakeupOnSince"))
    assert result.properties["WaitingServed"].holds is False
    assert len(result.violation("WaitingServed").steps) == 4
    assert [m for m in result.mismatches() if m.startswith("WaitingServed")]


def test_a_page_that_lost_its_table_is_one_line_naming_it():
    with pytest.raises(docs.DocsError) as lost:
        docs.with_property_rows("# The properties\n\nno table here\n")
    assert str(lost.value).startswith("docs/properties.md has lost its table headed '| property | kind |")
    assert "\n" not in str(lost.value)
