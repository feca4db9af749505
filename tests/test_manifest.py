"""The manifest (refutations/manifest.toml): every named configuration gives, at its own
constants, the verdicts, shortest lengths, distinct states and depth pinned there.

One test per configuration, as tlaplus/Examples checks its manifest.json.
"""

from __future__ import annotations

import pytest

import invariants
import refutations
from helpers import checked
from protocol.config import DEFAULT_CONSTANTS, ConfigError, _named_from, named_configurations

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
        assert set(named.expected_violations()) <= set(invariants.BY_NAME), name
        assert named.doc, f"{name} says nowhere why it holds or fails"


def test_a_refutation_module_holds_only_its_docstring():
    """The why stays beside the code; what it must give is data in the manifest."""
    for name, table in refutations.manifest().items():
        if "module" in table:
            assert refutations.why(table["module"]).strip(), name


def test_section_10_configurations_are_defined_at_one_process():
    for name in ("HoldsAlias", "HoldsAliasShared", "HoldsAliasOverwrite", "HoldsCapReconnect"):
        assert named_configurations()[name].config.P == 1
        assert named_configurations()[name].config.D == DEFAULT_CONSTANTS["D"]


def test_a_refutation_may_name_several_properties():
    assert named_configurations()["HoldsAliasShared"].expected_violations() == {"I1": 7, "NoRegression": 8}


def test_a_manifest_entry_with_a_switch_that_cannot_act_is_refused():
    tables = refutations.manifest()
    broken = {"switches": {"reconnect": True}}  # reconnect without the cap
    with pytest.raises(ConfigError, match=r"manifest.toml, \[Broken\]: switch reconnect=True needs cap=True"):
        _named_from("Broken", broken, {**tables, "Broken": broken})


def test_a_widened_configuration_keeps_its_own_constants_and_overrides_the_named_ones():
    named = named_configurations()["HoldsAlias"].with_constants({"MaxTime": 1})
    assert (named.config.P, named.config.MaxTime) == (1, 1)
