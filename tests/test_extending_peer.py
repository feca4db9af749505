"""docs/extending.md's third walk-through runs: a peer hold, which changes an existing step's
effect (rendering registers the hold) and what another reads (the publisher's bound, under
Publish's footprint and its ceiling), released by a never-fair action `PeerRelease(p, d)`.
Applied inside the test as the first walk-through is (tests/test_extending.py), it must give
the readable search's exact counts on every engine, break I1 where the release comes early,
and change nothing where its switch is at its default."""

from __future__ import annotations

import attrs

import pytest

from protocol.cli import main
from protocol.configurations.golden import golden_text
from protocol.engine import ModelError
from protocol.engine.checker import explore
from protocol.model import actions
from protocol.configurations import named as named_configs
from protocol.model import config
from protocol.model import next as model
from protocol.render.export import trace_markdown, trace_mermaid
from protocol.render.narrate import story
from protocol.run import check
from protocol.tools import factored
from protocol.tools.bench import walk_log
from protocol.tools.log import parse
from reference_validate import outcome, reference_outcome
from test_ceiling import shared_past_the_bound
from test_extending import (
    ENGINES, apply_walkthrough, assert_written_by_hand, engine_ids, readable_counts, switch_value_refusal,
    walkthrough_blocks,
)

NEW = ("HoldsPeerRelease", "HoldsPeerReleaseEarly")
MOST_FILES_BY_HAND = 7


@pytest.fixture
def peer(monkeypatch, tmp_path):
    return apply_walkthrough(monkeypatch, tmp_path, part=3)


@pytest.fixture
def pinned(peer, capsys):
    """The walk-through's first command: `pin` writes the new configurations' figures."""
    assert main(["pin", *NEW]) == 0
    capsys.readouterr()
    return peer


def test_the_third_walkthrough_touches_at_most_seven_files_none_under_tests():
    assert_written_by_hand(3, MOST_FILES_BY_HAND)


def test_the_walkthrough_changes_two_existing_steps_and_adds_no_property():
    places = {(block.path, block.registry or block.function) for block in walkthrough_blocks(3)}
    assert {("protocol/model/actions.py", "inter_create"), ("protocol/model/actions.py", "publish_holds"),
            ("protocol/model/actions.py", "HOLD_WORDS"), ("protocol/model/actions.py", "ACTIONS"),
            ("protocol/model/state.py", "VARIABLES")} <= places
    assert not [path for path, _ in places if path.startswith("protocol/properties/")]


# Two peeks (two PeerRelease instances per process), and two processes: the quick run's size.
SMALL = [dict(D=2, MaxTime=1), dict(P=2, MaxTime=1)]


def counted(name: str, constants: dict, options: dict) -> named_configs.NamedConfig:
    """The configuration `name` at `constants`, for counts only: the expectations go
    (--fingerprints refuses a configuration expected to violate a liveness property). The cap
    makes process 0 special, so --symmetry refuses both new configurations in one line; it
    counts the same switch on the shipped design at two processes, which are interchangeable."""
    named = attrs.evolve(named_configs.lookup(name).with_constants(constants), expect=())
    if not options.get("symmetry"):
        return named
    with pytest.raises(config.ConfigError, match="has the cap, which makes process 0 special: drop --symmetry"):
        check(named, liveness=False, **options)
    shipped = named_configs.lookup("Holds").config.evolve(reader_bound=False, peer_release=named.config.peer_release,
                                                   **{**named.config.constants, "P": 2})
    return named_configs.NamedConfig(f"Holds with {name}'s peer_release", shipped)


@pytest.mark.parametrize("options", ENGINES, ids=engine_ids)
@pytest.mark.parametrize("constants", SMALL, ids=engine_ids)
@pytest.mark.parametrize("name", NEW)
def test_every_engine_gives_the_readable_search_s_counts(peer, name, constants, options):
    named = counted(name, constants, options)
    labels = model.model_for(named.config).labels
    assert sum(label.name == "PeerRelease" and label.args[0] == 0 for label in labels) == named.config.D
    result = check(named, **{"liveness": False, **options})
    assert (result.distinct_states, result.depth) == readable_counts(named.config)


@pytest.mark.slow
@pytest.mark.parametrize("options", [dict(engine="packed"), dict(engine="vector"), dict(workers=2)], ids=engine_ids)
@pytest.mark.parametrize("name", NEW)
def test_at_the_manifest_s_constants_every_engine_is_as_expected(pinned, name, options):
    named = named_configs.lookup(name)
    result = check(named, **options)
    assert (result.distinct_states, result.depth) == readable_counts(named.config) == named.pinned
    assert result.mismatches() == []


def test_pin_then_check_is_as_expected(pinned):
    for name in NEW:
        named = named_configs.lookup(name)
        result = check(named)
        assert result.mismatches() == [], name
        assert (result.distinct_states, result.depth) == named.pinned == readable_counts(named.config)
    sound = check(named_configs.lookup("HoldsPeerRelease"))
    assert sound.properties["I1"].holds is True  # the peer hold bears the reader's load


def test_the_early_release_breaks_i1_in_eight_states(peer):
    named = named_configs.lookup("HoldsPeerReleaseEarly")
    result = check(named)
    trace = result.violation("I1")
    assert len(trace.steps) == dict(named.expect)["I1"] == 8
    assert [str(step.action) for step in trace.steps[1:]] == [
        "CreatePeek(0, 0)", "DropPeek(0)", "AdvancePolicy", "InterStep(0)", "MaintStep(0)", "PeerRelease(0, 0)",
        "Publish(0)"]
    told = [step.words for step in story(trace, named.config).steps]
    assert told[4].endswith("a peer hold at 0 is registered for peek 0")
    assert told[6] == ("the peer releases peek 0's peer hold at 0 on process 0 "
                       "(peek 0 is still rendered there, reading at its as_of)")
    assert result.mismatches() == []


def test_a_release_left_to_the_peer_stalls_compaction_in_the_sound_design_too(peer):
    result = check(named_configs.lookup("HoldsPeerRelease"))
    lasso = result.violation("CompactionNotStalled")
    assert len(lasso.steps) == 7
    assert str(lasso.steps[-1].action) == "InterStep(0)"  # the drop applied; the peer never lets go
    assert lasso.steps[-1].state.peer == ((0,),) and lasso.steps[-1].state.readers == ((None,),)


def test_the_publisher_names_the_peer_hold_among_its_holds(peer):
    named = named_configs.lookup("HoldsPeerRelease")
    readable = model.model_for(named.config)
    plain = explore(readable.initial_states, readable.successors, readable.invariants)
    held = next(s for s in plain.states if s.peer[0][0] is not None and s.readers[0][0] is None)
    assert ("peer of peek", 0, held.peer[0][0]) in actions.publish_holds(held, named.config, 0)
    assert actions.hold_words("peer of peek", 0, 1) == "peek 0's peer hold 1"


def test_a_publisher_reading_the_hold_s_time_from_as_of_is_one_line(peer, monkeypatch):
    """The page's claim: the hold's time read from the global as_of instead of peer[p] needs
    'as_of' among Publish's reads, or every engine stops at its first evaluation."""
    kept = actions.publish_holds

    def from_as_of(s, cfg, p):
        return [(kind, whose, s.as_of[whose] if kind == "peer of peek" else t) for kind, whose, t in kept(s, cfg, p)]

    monkeypatch.setattr(actions, "publish_holds", from_as_of)
    named = attrs.evolve(named_configs.lookup("HoldsPeerRelease").with_constants({"MaxTime": 1}), expect=())
    readable = model.model_for(named.config)
    with pytest.raises(ModelError) as breach:
        explore(readable.initial_states, readable.successors, readable.invariants)
    assert str(breach.value) == "Publish(p) reads the global as_of outside its footprint: add 'as_of' to its footprint's reads"
    for engine in ("packed", "vector"):
        with pytest.raises(ModelError) as breach:
            check(named, liveness=False, engine=engine)
        assert str(breach.value).startswith("Publish(p) reads the global as_of outside its footprint")


def test_validate_shares_past_publish_s_ceiling_with_the_peer_holds_and_agrees_with_the_exact_search(peer, monkeypatch):
    text = walk_log("HoldsPeerRelease", {"P": 1, "D": 3, "MaxTime": 8}, 60, 0, ["Publish", "Ingest", "MaintStep"])
    assert '"action": "PeerRelease"' in text and '"peer[0]"' in text  # the new action and variable, logged
    shared = shared_past_the_bound(monkeypatch)
    decided = factored.follow(parse(text))
    assert shared, "no set was shared between two values of upper: the test no longer tests the ceiling"
    assert outcome(decided) == reference_outcome(text)


def test_without_its_switch_nothing_changes(monkeypatch, tmp_path):
    def small():  # a Config made after the walk-through has its field (the steps read it)
        return named_configs.NamedConfig("Small", config.Config(P=1, D=1, MaxTime=1))

    before = check(small())
    apply_walkthrough(monkeypatch, tmp_path, part=3)
    after = check(small())
    assert (after.distinct_states, after.transitions, after.depth) == \
        (before.distinct_states, before.transitions, before.depth)
    assert after.properties.keys() == before.properties.keys()
    assert "PeerRelease" not in {label.name for label in model.model_for(small().config).labels}
    unbound = named_configs.lookup("HoldsCapReaderUnbound")  # the configuration the walk-through's are based on
    result = check(unbound)
    assert (result.distinct_states, result.depth) == unbound.pinned and result.mismatches() == []


def test_a_switch_value_out_of_its_domain_is_refused_in_one_line(peer):
    refused = switch_value_refusal(peer.root, 'peer_release = "early"', "sometimes")
    assert "[HoldsPeerReleaseEarly]" in refused and "sometimes" in refused


def test_the_refutation_is_exported_and_its_golden_trace_written(peer):
    named = named_configs.lookup("HoldsPeerReleaseEarly")
    result = check(named)
    trace = result.violation("I1")
    assert "peer holds {0: 0}" in trace_mermaid(trace, named.config)  # handed to the publisher at the render
    assert "the peer releases peek 0's peer hold at 0" in trace_markdown(trace, named.config)
    golden = golden_text("HoldsPeerReleaseEarly", result)
    assert "a peer hold at 0 is registered for peek 0" in golden and "stutters forever" in golden
