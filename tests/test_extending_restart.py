"""docs/extending.md's second walk-through runs: a never-fair runtime action with three
arguments (`ReaderRestart(p, d, t)`, several instances per process) and a safety property
declared by pair. Applied inside the test as the first walk-through is
(tests/test_extending.py), it must give the readable search's exact counts on every
engine: packed, symmetric, fingerprinted, partitioned and vector."""

from __future__ import annotations

import attrs

import pytest

from protocol.cli import main
from protocol.configurations import named as named_configs
from protocol.model import config
from protocol.model import next as model
from protocol.run import check
from test_extending import ENGINES, apply_walkthrough, assert_written_by_hand, engine_ids, readable_counts

NEW = ("HoldsRestart", "HoldsRestartBackward")
MOST_FILES_BY_HAND = 7


@pytest.fixture
def restart(monkeypatch, tmp_path):
    return apply_walkthrough(monkeypatch, tmp_path, part=2)


@pytest.fixture
def pinned(restart, capsys):
    """The walk-through's first command: `pin` writes the new configurations' figures."""
    assert main(["pin", *NEW]) == 0
    capsys.readouterr()
    return restart


def test_the_second_walkthrough_touches_at_most_seven_files_none_under_tests():
    assert_written_by_hand(2, MOST_FILES_BY_HAND)


@pytest.mark.parametrize("options", ENGINES, ids=engine_ids)
@pytest.mark.parametrize("name", NEW)
def test_every_engine_gives_the_readable_search_s_counts(restart, name, options):
    """At MaxTime=1 (two instances per process and peek): the quick run's size."""
    # Counts only: the expectations go (--fingerprints refuses a configuration expected to
    # violate a liveness property).
    named = attrs.evolve(named_configs.lookup(name).with_constants({"MaxTime": 1}), expect=())
    assert sum(label.name == "ReaderRestart" and label.args[0] == 0
               for label in model.model_for(named.config).labels) == 2  # several instances per process
    result = check(named, **{"liveness": False, **options})
    assert (result.distinct_states, result.depth) == readable_counts(named.config)


@pytest.mark.slow
@pytest.mark.parametrize("options", [dict(engine="packed"), dict(engine="vector"), dict(symmetry=True),
                                     dict(workers=2)], ids=engine_ids)
@pytest.mark.parametrize("name", NEW)
def test_at_the_manifest_s_constants_every_engine_is_as_expected(pinned, name, options):
    named = named_configs.lookup(name)
    assert sum(label.name == "ReaderRestart" and label.args[0] == 0
               for label in model.model_for(named.config).labels) == 3
    result = check(named, **options)
    assert (result.distinct_states, result.depth) == readable_counts(named.config) == named.pinned
    assert result.mismatches() == []


def test_the_refutation_breaks_the_new_property_in_four_states_and_i1_in_eight(restart):
    result = check(named_configs.lookup("HoldsRestartBackward"))
    trace = result.violation("RegistrationCoversAsOf")
    assert len(trace.steps) == 4
    assert [str(step.action) for step in trace.steps[1:]] == ["CreatePeek(0, 1)", "InterStep(0)",
                                                              "ReaderRestart(0, 0, 0)"]
    assert len(result.violation("I1").steps) == 8
    assert result.mismatches() == []


def test_without_its_switch_nothing_changes(monkeypatch, tmp_path):
    small = named_configs.NamedConfig("Small", config.Config(P=1, D=1, MaxTime=1))
    before = check(small)
    apply_walkthrough(monkeypatch, tmp_path, part=2)
    after = check(small)
    assert (after.distinct_states, after.transitions, after.depth) == \
        (before.distinct_states, before.transitions, before.depth)
    assert after.properties.keys() == before.properties.keys()
