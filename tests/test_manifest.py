"""The manifest (protocol/configurations/manifest.toml): every named configuration gives, at its own
constants, the verdicts, shortest lengths, distinct states and depth pinned there.

One test per configuration, as tlaplus/Examples checks its manifest.json.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from protocol import properties
from protocol import configurations as configs
import protocol.run

from helpers import cached_check, checked
from protocol.cli import main
from protocol.model.config import DEFAULT_CONSTANTS, QUICK_STATES, ConfigError
from protocol.configurations.named import _named_from, named_configurations
from protocol.configurations.named import MANIFEST_KEYS as KEYS
from protocol.configurations.pin import repinned

NAMES = list(named_configurations())


@pytest.mark.parametrize("name", NAMES)
def test_each_configuration_gives_what_the_manifest_pins(name):
    named = named_configurations()[name]
    result = checked(name)
    assert (result.distinct_states, result.depth) == named.pinned
    violated = {prop: verdict.trace_length for prop, verdict in result.properties.items() if verdict.holds is False}
    assert violated == named.expected_violations()
    assert all(verdict.holds is True for prop, verdict in result.properties.items() if prop not in violated)
    assert result.as_expected


def test_every_configuration_pins_its_counts_and_names_only_known_properties():
    for name, named in named_configurations().items():
        assert named.pinned is not None, f"{name} pins no distinct states and depth"
        assert set(named.expected_violations()) <= set(properties.declared()), name
        assert named.doc, f"{name} says nowhere why it holds or fails"


def test_a_refutation_module_holds_only_its_docstring():
    """The why stays beside the code; what it must give is data in the manifest."""
    for name, table in configs.manifest().items():
        if "module" in table:
            assert configs.why(table["module"]).strip(), name


def test_section_10_configurations_are_defined_at_one_process():
    for name in ("HoldsAlias", "HoldsAliasShared", "HoldsAliasOverwrite", "HoldsCapReconnect"):
        assert named_configurations()[name].config.P == 1
        assert named_configurations()[name].config.D == DEFAULT_CONSTANTS["D"]


def test_a_refutation_may_name_several_properties():
    assert named_configurations()["HoldsAliasShared"].expected_violations() == {"I1": 7, "NoRegression": 8}


def test_a_manifest_entry_with_a_switch_that_cannot_act_is_refused():
    tables = configs.manifest()
    broken = {"doc": "a design", "switches": {"reconnect": True}}  # reconnect without the cap
    with pytest.raises(ConfigError, match=r"manifest.toml, \[Broken\]: switch reconnect=True needs cap=True"):
        _named_from("Broken", broken, {**tables, "Broken": broken})


def test_a_widened_configuration_keeps_its_own_constants_and_overrides_the_named_ones():
    named = named_configurations()["HoldsAlias"].with_constants({"MaxTime": 1})
    assert (named.config.P, named.config.MaxTime) == (1, 1)


# ------------------------------------------------------------ validated as it is read
#
# Each case edits one line of a copy of the manifest (PROTOCOL_MANIFEST points the
# tool at it) and expects one line on stderr, exit 2, naming the entry, the key and
# the fix. HoldsCapReconnect (691 states) is the configuration checked.

SMALL = "HoldsCapReconnect"


@pytest.fixture
def manifest_copy(tmp_path, monkeypatch):
    """A copy of the manifest that the tool reads instead of the real one.

    The tool's explorations are memoized: what these tests edit (pinned figures, vacuity
    lists, expectations) is part of the memo's key, and the counts are the model's."""
    copy = tmp_path / "manifest.toml"
    shutil.copyfile(configs.manifest_path(), copy)
    monkeypatch.setenv(configs.MANIFEST_ENV, str(copy))
    monkeypatch.setattr(protocol.run, "check", cached_check)
    return copy


def edit(path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= count, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def one_line_refusal(capsys, argv=("check", SMALL, "--no-trace")) -> str:
    assert main(list(argv)) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert "Traceback" not in captured.err
    return captured.err


INVALID = [
    # (old line, new line, what the one line must say)
    ("expect = { I1 = 6 }", "expects = { I1 = 6 }", "[HoldsRouted]: unknown key `expects`: did you mean `expect`?"),
    ("distinct_states = 8917", "distinct_state = 8917",
     "[HoldsRouted]: unknown key `distinct_state`: did you mean `distinct_states`?"),
    ("expect = { I1 = 6 }", "expect = { I2 = 6 }", "[HoldsRouted], `expect`: no property `I2`: did you mean `I1`?"),
    ("expect = { I1 = 6 }", "expect = { I1 = 0 }", "[HoldsRouted], `expect`: I1: 0 is not a whole number >= 1"),
    ('switches = { compaction = "routed", standing_hold = false }',
     'switches = { compaction = "routed", standing_hold = false, acquired = "none" }',
     "[HoldsRouted], `switches`: no switch `acquired`: did you mean `acquire`?"),
    ('switches = { compaction = "routed", standing_hold = false }',
     'switches = { compaction = "both", standing_hold = false }',
     "[HoldsRouted], `switches`: compaction = 'both' is not one of: 'routed', 'broadcast'"),
    ("cap = true }", 'cap = "yes" }', "[HoldsCap], `switches`: cap = 'yes' is not one of: false, true"),
    ("constants = { P = 1 }\nswitches = { reconnect", "constants = { P = 9 }\nswitches = { reconnect",
     "[HoldsCapReconnect], `constants`: constant P=9 is out of range: P must be <= 8"),
    ("constants = { P = 1 }\nswitches = { reconnect", "constants = { Q = 1 }\nswitches = { reconnect",
     "[HoldsCapReconnect], `constants`: no constant `Q`"),
    ("depth = 17", 'depth = "17"', "[HoldsRouted], `depth`: '17' is not a whole number >= 0"),
    ("depth = 17", "depth = 1.5", "[HoldsRouted], `depth`: 1.5 is not a whole number >= 0"),
    ('based_on = "HoldsCap"', 'based_on = "HoldCap"',
     "[HoldsCapReconnect], `based_on`: no configuration 'HoldCap' to base [HoldsCapReconnect] on: "
     "did you mean `HoldsCap`?"),
    ('module = "holds_routed"', 'module = "holds_routd"',
     "[HoldsRouted], `module`: no module protocol/configurations/holds_routd.py"),
    ('module = "holds_cap"', 'module = "holds_cap"\nbased_on = "HoldsCapReconnect"',
     "[HoldsCap], `based_on`: a cycle (HoldsCap -> HoldsCapReconnect -> HoldsCap): break it"),
    ('switches = { reconnect = true }', 'switches = { reconnect = true, cap = false }',
     "[HoldsCapReconnect]: switch reconnect=True needs cap=True: drop reconnect or set cap=True"),
    ('module = "holds_routed"', 'doc = "x"\nmodule = "holds_routed"', "[HoldsRouted]: give `doc`"),
    ("distinct_states = 8917\n", "", "[HoldsRouted]: pins one of `distinct_states` and `depth`: give both, "
                                      "or run `python -m protocol pin HoldsRouted`"),
    ("needs = { D = 1, MaxTime = 1 }\nnonvacuous",
     "needs = { NoRegression = { D = 1 } }\nnonvacuous",
     "[HoldsRouted], `needs`: NoRegression is not in `expect`"),
    ("expect = { I1 = 6 }", "expect = { ImportsBacked = 6 }",
     "[HoldsRouted], `expect`: ImportsBacked is not a property of this configuration"),
    ("depth = 17", 'depth = 17\nsize = "tiny"', "[HoldsRouted], `size`: 'tiny' is not one of: 'quick', 'slow'"),
    ('nonvacuous = ["CompactionNotStalled"]\nreachable = ["PeekRendered", "CompactionSent", "SinceAdvanced"]',
     'nonvacuous = ["I1"]\nreachable = ["PeekRendered", "CompactionSent", "SinceAdvanced"]', "[HoldsRouted], `nonvacuous`: no liveness property `I1`"),
    ("depth = 17", 'depth = 17\nvacuous_ok = { CompactionNotStalled = 3 }',
     "[HoldsRouted], `vacuous_ok`: CompactionNotStalled: 3 is not a non-empty string"),
    ('reachable = ["PeekRendered", "CompactionSent", "SinceAdvanced"]\ndistinct_states = 8917',
     'reachable = "a peek is parked"\ndistinct_states = 8917',
     "[HoldsRouted], `reachable`: 'a peek is parked' is not a list"),
    ('reachable = ["PeekRendered", "CompactionSent", "SinceAdvanced"]\ndistinct_states = 8917',
     'reachable = ["PeekParkd"]\ndistinct_states = 8917',
     "[HoldsRouted], `reachable`: no reachable state `PeekParkd`"),
]


@pytest.mark.parametrize("old, new, says", INVALID, ids=[case[2].split(":")[1].strip()[:40] for case in INVALID])
def test_an_invalid_manifest_entry_is_one_line_naming_the_entry_and_the_key(manifest_copy, capsys, old, new, says):
    edit(manifest_copy, old, new)
    error = one_line_refusal(capsys)
    assert error.startswith(f"protocol: {manifest_copy}, ") and says in error


def test_the_keys_the_next_issue_needs_are_accepted(manifest_copy, capsys):
    edit(manifest_copy, 'nonvacuous = ["CompactionNotStalled"]\nreachable = ["PeekCapped", "SinceAdvanced"]\n'
         'distinct_states = 691', 'nonvacuous = ["CompactionNotStalled"]\n'
         'vacuous_ok = { ImportsBacked = "no alias" }\nreachable = ["PeekCreated"]\nsize = "quick"\ndistinct_states = 691')
    edit(manifest_copy, "[HoldsCapReconnect]", '[HoldsCapReconnect]\nalso = 1')
    assert "unknown key `also`" in one_line_refusal(capsys)
    edit(manifest_copy, "also = 1\n", "")
    edit(manifest_copy, 'vacuous_ok = { ImportsBacked = "no alias" }\n',
         'vacuous_ok = { CompactionNotStalled = "no peek is ever sent" }\n')
    assert main(["check", SMALL, "--no-trace"]) == 0
    named = named_configurations()[SMALL]
    assert (named.nonvacuous, dict(named.vacuous_ok), named.reachable, named.size_class) == (
        ("CompactionNotStalled",), {"CompactionNotStalled": "no peek is ever sent"}, ("PeekCreated",), "quick")


@pytest.mark.parametrize("content, says", [
    (b"[Holds\n", "is not valid TOML: "),
    (b"\xff\xfe[Holds]", "is not UTF-8 text (byte 0 is 0xff)"),
    (b"", "names no configuration: add a [Name] table"),
    (b"P = 1\n[Holds]\n", "`P = ...` stands outside any [Name] table"),
], ids=["malformed", "binary", "empty", "top-level key"])
def test_a_manifest_that_cannot_be_read_is_one_line(manifest_copy, capsys, content, says):
    manifest_copy.write_bytes(content)
    assert says in one_line_refusal(capsys, ("list",))


def test_a_missing_manifest_is_one_line(manifest_copy, capsys):
    manifest_copy.unlink()
    assert "does not exist" in one_line_refusal(capsys, ("list",))


def test_every_key_is_explained_once_where_it_is_declared():
    # The header points at MANIFEST_KEYS, whose meanings docs --write turns into the table
    # of docs/checker.md and the descriptions of the JSON Schema: no third copy to keep.
    header = "".join(line for line in configs.manifest_path().read_text().splitlines(True)
                     if line.startswith("#"))
    assert "MANIFEST_KEYS" in header and [key for key in KEYS if f"`{key}`" in header] == []
    from protocol.apps.docs import manifest_keys_table

    assert all(f"| `{key.name}` | {key.meaning} |" in manifest_keys_table() for key in KEYS.values())


def test_the_manifest_schema_is_the_declared_keys_and_accepts_the_manifest():
    import tomllib

    from protocol.configurations.named import manifest_schema

    jsonschema = pytest.importorskip("jsonschema")
    schema = manifest_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    entry = schema["additionalProperties"]
    assert list(entry["properties"]) == list(KEYS) and entry["additionalProperties"] is False
    tables = tomllib.loads(configs.manifest_path().read_text())
    validator = jsonschema.Draft202012Validator(schema)
    assert list(validator.iter_errors(tables)) == []
    for broken in ({"expects": {"I1": 5}}, {"switches": {"cap": "yes"}}, {"expect": {"I2": 5}},
                   {"constants": {"P": 0}}, {"doc": "x", "module": "holds_cap"}):
        entry = {**tables["HoldsCap"], **broken}
        assert list(validator.iter_errors({"HoldsCap": entry})), broken
    unpinned_depth = {key: value for key, value in tables["HoldsCap"].items() if key != "depth"}
    assert list(validator.iter_errors({"HoldsCap": unpinned_depth}))


def test_the_committed_schema_is_the_generated_one():
    from protocol.apps.docs import MANIFEST_SCHEMA, PACKAGE_ROOT, manifest_schema_text

    assert (PACKAGE_ROOT / MANIFEST_SCHEMA).read_text() == manifest_schema_text()


# ------------------------------------------------------------ check compares the pinned counts; pin re-pins them


def test_a_changed_pinned_count_is_not_as_expected_and_pin_restores_it(manifest_copy, capsys):
    original = manifest_copy.read_bytes()
    edit(manifest_copy, "distinct_states = 691\ndepth = 12", "distinct_states = 690\ndepth = 13")
    assert main(["check", SMALL, "--no-trace"]) == 1
    out = capsys.readouterr().out
    assert "NOT as expected" in out
    assert re.search(r"distinct states 691, but the manifest pins 690", " ".join(out.replace("│", " ").split()))
    assert main(["check", SMALL, "--json"]) == 1
    record = json.loads(capsys.readouterr().out)
    assert (record["distinct_states"], record["depth"], record["as_expected"]) == (691, 12, False)
    assert record["pinned"] == {"distinct_states": 690, "depth": 13}
    assert main(["check", SMALL, "-c", "MaxTime=1", "--json"]) == 0  # other constants: nothing compared
    assert "pinned" not in json.loads(capsys.readouterr().out)

    assert main(["pin", SMALL]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"{SMALL}: distinct states 690 -> 691, depth 13 -> 12"
    assert manifest_copy.read_bytes() == original  # comments, order, every other byte kept
    assert main(["check", SMALL, "--json"]) == 0
    assert "pinned" not in json.loads(capsys.readouterr().out)
    assert main(["pin", SMALL]) == 0
    assert capsys.readouterr().out.startswith("nothing changed: ")


def test_pin_refuses_other_constants_and_unknown_names(manifest_copy, capsys):
    before = manifest_copy.read_bytes()
    assert "drop -c" in one_line_refusal(capsys, ("pin", SMALL, "-c", "P=2"))
    assert "unknown configuration" in one_line_refusal(capsys, ("pin", "HoldsNope"))
    assert manifest_copy.read_bytes() == before


def test_repinning_touches_only_the_two_figures_and_adds_missing_ones():
    source = ("# a comment\n[A]\ndoc = \"a\"\ndistinct_states = 5  # pinned\ndepth = 2\n\n"
              "[B]\ndoc = \"b\"  # no figures yet\n\n# B ends here\n[C]\ndoc = \"c\"\n")
    assert repinned(source, "A", {"distinct_states": 7, "depth": 2}) == source.replace("= 5  #", "= 7  #")
    added = repinned(source, "B", {"distinct_states": 3, "depth": 1})
    assert added == source.replace('"b"  # no figures yet\n', '"b"  # no figures yet\ndistinct_states = 3\ndepth = 1\n')
    with pytest.raises(ConfigError, match=r"no \[D\] header"):
        repinned(source, "D", {"distinct_states": 1, "depth": 0})


# ------------------------------------------------------------ the size class


def test_the_size_class_is_the_manifests_size_else_the_pinned_states_against_one_threshold():
    for named in named_configurations().values():
        assert named.size_class == (named.size or ("quick" if named.pinned[0] <= QUICK_STATES else "slow"))
    tables = configs.manifest()
    small = {"doc": "d", "distinct_states": QUICK_STATES, "depth": 3}
    assert _named_from("Small", small, tables).size_class == "quick"
    assert _named_from("Small", {**small, "distinct_states": QUICK_STATES + 1}, tables).size_class == "slow"
    assert _named_from("Small", {**small, "size": "slow"}, tables).size_class == "slow"
    assert _named_from("Unpinned", {"doc": "d"}, tables).size_class == "slow"


def test_pin_writes_the_figures_of_an_entry_that_has_none(manifest_copy, capsys):
    original = manifest_copy.read_bytes()
    edit(manifest_copy, "distinct_states = 691\ndepth = 12\n", "")
    assert named_configurations()[SMALL].pinned is None
    assert main(["pin", SMALL]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"{SMALL}: pinned distinct states 691, depth 12"
    assert manifest_copy.read_bytes() == original  # the entry's last lines, where they were


def test_every_output_that_says_as_expected_compares_the_counts(manifest_copy, capsys, tmp_path):
    edit(manifest_copy, "distinct_states = 691", "distinct_states = 690")
    assert main(["check", "HoldsRouted", SMALL, "--no-trace"]) == 1  # the totals of several
    totals = capsys.readouterr().out.split("check --all")[-1]
    assert re.search(rf"HoldsRouted .* yes\s*\n.*{SMALL} .* NO", totals)
    assert "2 configurations, 1 not as expected" in totals
    page = tmp_path / "report.html"
    assert main(["report", SMALL, "--output", str(page)]) == 1
    assert "distinct states 691, but the manifest pins 690" in page.read_text()
    assert main(["check", SMALL, "--format", "markdown", "--no-trace"]) == 1
    assert "**NOT as expected**" in capsys.readouterr().out


def test_pin_on_a_read_only_file_system_is_one_line_and_keeps_the_manifest(manifest_copy, capsys, monkeypatch):
    """Issue 32: the temporary file beside the manifest could not be made (EROFS) and pin ended
    in an OSError traceback; it is one line, exit 4 (the environment), the manifest as it was."""
    import errno
    import tempfile

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    edit(manifest_copy, "distinct_states = 691\ndepth = 12", "distinct_states = 690\ndepth = 13")
    before = manifest_copy.read_bytes()
    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    assert main(["pin", SMALL]) == 4  # the environment: a file system that refuses the write
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Read-only file system; left as it was" in err, err
    assert manifest_copy.read_bytes() == before
