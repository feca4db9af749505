"""Configurations as data: the switches of spec section 8, constants and their ranges."""

from __future__ import annotations

import pytest

from protocol.model.config import DEFAULT_CONSTANTS, Config, ConfigError, check_constant, parse_constant
from protocol.configurations.named import lookup, named_configurations

# Spec section 8, every switch written out (section 2's defaults filled in).
SWITCHES = {
    "Holds": dict(compaction="broadcast", standing_hold=True, cap=False, acquire="none",
                  physical="from_since", fairness=True),
    "HoldsAcquire": dict(compaction="routed", standing_hold=False, cap=False,
                         acquire="release_on_interactive", physical="from_since", fairness=True),
    "HoldsRouted": dict(compaction="routed", standing_hold=False, cap=False, acquire="none",
                        physical="from_since", fairness=True),
    "HoldsBroadcast": dict(compaction="broadcast", standing_hold=False, cap=False, acquire="none",
                           physical="from_since", fairness=True),
    "HoldsCap": dict(compaction="routed", standing_hold=False, cap=True, acquire="none",
                     physical="from_since", fairness=True),
    "HoldsReleaseOnMaint": dict(compaction="routed", standing_hold=False, cap=False,
                                acquire="release_on_maintenance", physical="from_since",
                                fairness=True),
    "HoldsPhysicalFromUpper": dict(compaction="broadcast", standing_hold=True, cap=False,
                                   acquire="none", physical="from_upper", fairness=True),
}


def test_the_spec_defaults():
    assert Config().constants == {"P": 2, "D": 1, "MaxTime": 2} == DEFAULT_CONSTANTS
    assert Config().switches == dict(compaction="routed", standing_hold=False, cap=False,
                                     acquire="none", physical="from_since", fairness=True)


@pytest.mark.parametrize("name", list(SWITCHES))
def test_each_named_configuration_has_the_specs_switches_and_default_constants(name):
    config = named_configurations()[name].config
    assert config.switches == SWITCHES[name]
    assert config.constants == DEFAULT_CONSTANTS


def test_constants_apply_to_a_named_configuration_and_keep_its_switches():
    named = lookup("HoldsCap").with_constants({"P": 3, "MaxTime": 1})
    assert named.config.constants == {"P": 3, "D": 1, "MaxTime": 1}
    assert named.config.switches == SWITCHES["HoldsCap"]


def test_the_pinned_length_applies_wherever_the_defect_can_show():
    routed = lookup("HoldsRouted")
    assert (routed.expected_violation(), routed.expected_length()) == ("I1", 6)
    wider = routed.with_constants({"D": 2, "P": 3})
    assert (wider.expected_violation(), wider.expected_length()) == ("I1", 6)
    no_peek = routed.with_constants({"D": 0})
    assert (no_peek.expected_violation(), no_peek.expected_length()) == (None, None)


def test_the_cap_is_expected_to_hold_with_one_process():
    assert lookup("HoldsCap").with_constants({"P": 1}).expected_violation() is None
    assert lookup("HoldsCap").with_constants({"P": 3}).expected_violation() == "I1"


# ------------------------------------------------------------------ lookup


def test_lookup_ignores_case():
    assert lookup("holdsrouted").name == "HoldsRouted"


@pytest.mark.parametrize("typo, closest", [("HoldsRoute", "HoldsRouted"), ("HoldCap", "HoldsCap"),
                                           ("HoldsAquire", "HoldsAcquire")])
def test_an_unknown_name_suggests_the_closest_and_lists_the_known(typo, closest):
    with pytest.raises(ConfigError) as caught:
        lookup(typo)
    message = str(caught.value)
    assert f"Did you mean {closest}?" in message
    assert all(name in message for name in SWITCHES)
    assert "\n" not in message


# --------------------------------------------------------------- constants


@pytest.mark.parametrize("text, parsed", [("P=3", ("P", 3)), ("D=0", ("D", 0)),
                                          ("MaxTime = 0", ("MaxTime", 0))])
def test_parse_constant(text, parsed):
    assert parse_constant(text) == parsed


@pytest.mark.parametrize(
    "text, words",
    [
        ("P=0", ["P=0", "P must be >= 1"]),
        ("D=-1", ["D=-1", "D must be >= 0"]),
        ("MaxTime=-1", ["MaxTime=-1", "MaxTime must be >= 0"]),
        ("P=x", ["P='x'", "not an integer", "P >= 1"]),
        ("P=1.5", ["not an integer"]),
        ("Q=1", ["unknown constant 'Q'", "P, D, MaxTime"]),
        ("P", ["NAME=VALUE", "-c P=3"]),
        ("=3", ["NAME=VALUE"]),
    ],
)
def test_a_bad_constant_is_one_line_naming_it_and_the_range(text, words):
    with pytest.raises(ConfigError) as caught:
        parse_constant(text)
    message = str(caught.value)
    assert all(word in message for word in words), message
    assert "\n" not in message


@pytest.mark.parametrize("name, value", [("P", 0), ("D", -1), ("MaxTime", -2), ("P", True),
                                         ("D", 1.0), ("Q", 1)])
def test_a_config_refuses_a_constant_out_of_range(name, value):
    with pytest.raises(ConfigError):
        check_constant(name, value)
    if name != "Q":
        with pytest.raises(ConfigError):
            Config(**{name: value})


@pytest.mark.parametrize("switch, value", [("compaction", "both"), ("acquire", "always"),
                                           ("cap", "yes"), ("physical", "from_writer")])
def test_a_config_refuses_an_unknown_switch_value(switch, value):
    with pytest.raises(ConfigError, match=switch):
        Config(**{switch: value})
