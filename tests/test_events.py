"""Effects say what happened: every step records events, and narration and drawing
render those events and nothing else.

The event kinds are declared beside the effects in protocol/model/actions.py and
registered in `protocol.model.events.EVENT_KINDS`. These tests check that every kind
has words and a drawing, that every kind but the unreachable ones is recorded
by some step of a named configuration (the coverage targets a generated test
suite aims at), that the search pays nothing for them, and that narration and
drawing follow the recorded events: a sabotaged effect that records another
event changes what is said and drawn although the states are the same.
"""

from __future__ import annotations

import random

import attrs
import pytest

from protocol.model import actions
from protocol.model import events
from protocol.render import export
from protocol.render import narrate
from protocol.model.commands import ACQUIRE, MAINTENANCE
from protocol.model.config import HOLDS
from protocol.configurations.named import NamedConfig, lookup, named_configurations
from protocol.model.events import EVENT_KINDS, Event
from protocol.model.explain import explain
from protocol.model.next import model_for, replay
from protocol.run import check
from protocol.model.trace import Trace

# Kinds no configuration reaches, and why: the test below fails if one of them is reached.
UNREACHABLE = {
    "ReleaseEarly": "a Release reaches maintenance only behind its Acquire, on the same FIFO stream",
}
WALKS, DEPTH = 10, 30  # seeded random walks per named configuration: ten reach every kind (six do)


def missing_pieces_of_events() -> list[str]:
    found = []
    for name, kind in EVENT_KINDS.items():
        for piece in ("words", "drawing"):
            if piece not in vars(kind):
                found.append(f"event {name} has no {piece}")
        if not (attrs.has(kind) and issubclass(kind, Event)):
            found.append(f"event {name} is not an attrs Event (declare it with @event)")
    return found


def test_every_event_kind_has_words_and_a_drawing():
    assert len(EVENT_KINDS) >= 20
    assert missing_pieces_of_events() == []


def test_the_check_names_an_event_kind_without_words(monkeypatch):
    @attrs.frozen
    class Mute(Event):
        def drawing(self) -> tuple:
            return ()

    monkeypatch.setitem(EVENT_KINDS, "Mute", Mute)
    assert missing_pieces_of_events() == ["event Mute has no words"]
    with pytest.raises(NotImplementedError, match="event Mute has no words"):
        Mute().words()


def test_events_are_plain_frozen_data():
    event = actions.PeekCreated(0, 0, 1, False)
    assert event == actions.PeekCreated(0, 0, 1, False) and hash(event) == hash(actions.PeekCreated(0, 0, 1, False))
    assert event.kind == "PeekCreated"
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        event.t = 2


def recorded_kinds(cfg, seed: int = 0) -> tuple[set, list]:
    """The kinds the steps of seeded random walks of cfg record (every enabled step of every
    state visited), and the steps that record nothing of what they did."""
    model, chooser = model_for(cfg), random.Random(seed)
    kinds, silent = set(), []
    for _ in range(WALKS):
        before = model.initial_states[0]
        for _ in range(DEPTH):
            enabled = model.successors(before)
            if not enabled:
                break
            for label, after in enabled:
                recorded = explain(cfg, label, before, after)
                if not recorded or (recorded[0].kind == "Applied" and len(recorded) < 2):
                    silent.append(str(label))
                for event in recorded:
                    kinds.add(event.kind)
                    assert event.words() and isinstance(event.drawing(), tuple), event
            before = chooser.choice(enabled)[1]
    return kinds, silent


@pytest.mark.slow  # about a second: the quick run stays near a CPU minute; CI runs it
def test_every_step_records_what_it_did_and_every_kind_is_reached():
    reached = set()
    for named in named_configurations().values():
        kinds, silent = recorded_kinds(named.config)
        assert silent == [], f"{named.name}: steps that record nothing of their effect: {silent[:3]}"
        reached |= kinds
    assert reached == set(EVENT_KINDS) - set(UNREACHABLE)
    assert not reached & set(UNREACHABLE)


def test_the_search_passes_no_recorder(monkeypatch):
    """Neither the readable successor function nor `check`'s packed engine builds an event."""
    built = []
    for kind in (actions.PeekCreated, actions.Applied, actions.Published, actions.CompactionSent):
        original = kind.__init__

        def counting(self, *args, _original=original, **kwargs):
            built.append(type(self).__name__)
            _original(self, *args, **kwargs)

        monkeypatch.setattr(kind, "__init__", counting)
    small = HOLDS.evolve(P=1, MaxTime=1)
    model = model_for(small)
    assert model.successors(model.initial_states[0])  # CreatePeek is enabled here
    result = check(NamedConfig("Small", small))
    assert result.distinct_states > 100 and built == []
    explain(small, ("CreatePeek", 0, 0), model.initial_states[0])
    assert built == ["PeekCreated"]


# ------------------------------------------- narration follows the events


def acquire_trace():
    cfg = lookup("HoldsAcquire").config
    steps = replay(cfg, ["CreatePeek(0, 0)", "MaintStep(0)"])
    return cfg, Trace("I1", tuple(steps))


def consumed_instead(monkeypatch) -> None:
    """Sabotage: maintenance's Acquire effect installs the hold as before, but records
    that the release consumed it."""
    real = actions.MAINTENANCE_EFFECTS[ACQUIRE]

    def lying(s, cfg, p, command, record=None):
        after = real(s, cfg, p, command)
        if record is not None:
            record.append(actions.AcquireConsumed(command[1], command[2]))
        return after

    monkeypatch.setitem(actions.MAINTENANCE_EFFECTS, ACQUIRE, lying)


def test_a_sabotaged_effect_that_records_another_event_changes_the_narration(monkeypatch):
    cfg, trace = acquire_trace()
    before, after = trace.steps[1].state, trace.steps[2].state
    honest = narrate.narrate(trace.steps[2].action, before, after, cfg)
    drawn = export.trace_mermaid(trace, cfg)
    assert "applies Acquire(0, 0): it installs a read hold at 0 for peek 0" in honest
    assert "maint0->>pub0: acquired holds" in drawn

    consumed_instead(monkeypatch)
    assert replay(cfg, ["CreatePeek(0, 0)", "MaintStep(0)"])[-1].state == after  # the same step
    told = narrate.narrate(trace.steps[2].action, before, after, cfg)
    assert told == ("process 0's maintenance runtime receives Acquire(0, 0) after the release overtook it: "
                    "the release is consumed and no hold is installed")
    assert "maint0->>pub0" not in export.trace_mermaid(trace, cfg)


def test_narration_and_drawing_are_functions_of_the_events_alone(monkeypatch):
    """Every step of a trace, given the events of another step, is said and drawn as that
    other step: nothing is read from the states before and after."""
    named = lookup("HoldsRouted")
    trace = replay(named.config, ["CreatePeek(0, 0)", "DropPeek(0)", "AdvancePolicy", "MaintStep(0)",
                                  "Publish(0)"])
    told = narrate.story(Trace("I1", tuple(trace)), named.config)
    publish = told.steps[-1].events
    monkeypatch.setattr(narrate, "explain", lambda cfg, label, before, after: publish)
    again = narrate.story(Trace("I1", tuple(trace)), named.config)
    assert {step.words for step in again.steps[1:]} == {told.steps[-1].words}
    lines = {tuple(export._mermaid_step("Publish(0)", 9, step.events, 2)) for step in again.steps[1:]}
    assert lines == {(f"Note over pub0: 9. Publish(0): since 1, physical 0",)}


def test_a_step_the_configuration_does_not_take_is_told_by_its_label():
    cfg, trace = acquire_trace()
    before, after = trace.steps[1].state, trace.steps[2].state
    assert explain(cfg, trace.steps[2].action, before, before) == ()
    assert narrate.narrate(trace.steps[2].action, before, before, cfg) == "MaintStep(0)"
    assert explain(cfg, ("Stamp", 0), before, after) == ()


def test_the_publisher_names_the_holds_its_bound_is_the_least_of():
    """The Publish sentence lists exactly the holds `publish_bound` takes the least of."""
    cfg = HOLDS.evolve(acquire="release_on_interactive")
    steps = replay(cfg, ["AdvancePolicy", "CreatePeek(0, 1)", "MaintStep(0)", "MaintStep(0)", "InterStep(0)",
                         "InterStep(0)", "Publish(0)"])
    before, after = steps[-2].state, steps[-1].state
    holds = actions.publish_holds(before, cfg, 0)
    assert [actions.hold_words(*hold) for hold in holds] == [
        "writer 1", "standing 1", "peek 0's reader 1", "peek 0's acquired hold 1"]
    assert actions.publish_bound(before, cfg, 0) == min(t for _, _, t in holds) == after.since[0] == 1
    assert narrate.narrate(steps[-1].action, before, after, cfg) == (
        "process 0's publisher raises the published since from 0 to 1 (the least of its holds: writer 1, "
        "standing 1, peek 0's reader 1, peek 0's acquired hold 1)")


def test_the_queued_commands_are_drawn_stream_by_stream_then_process_by_process():
    sends = (events.Send(MAINTENANCE, "Compact(1)", (0, 1)), events.Send("interactive", "Drop(0)", (0, 1)),
             events.Send("interactive", "Compact(1)", (0, 1)))

    class Drawn(Event):
        def drawing(self) -> tuple:
            return sends

    assert export._mermaid_step("DropPeek(0)", 3, (Drawn(),), 2) == [
        "Note over controller: 3. DropPeek(0)",
        "multiplexer-)inter0: Drop(0)", "multiplexer-)inter0: Compact(1)",
        "multiplexer-)inter1: Drop(0)", "multiplexer-)inter1: Compact(1)",
        "multiplexer-)maint0: Compact(1)", "multiplexer-)maint1: Compact(1)",
    ]


def test_a_capped_forward_is_said_once():
    """The forwarded Compact is told by the compaction's event, not again as a queued command
    (the narration that diffed the queues said it twice)."""
    cfg = lookup("HoldsCap").config.evolve(D=2)
    steps = replay(cfg, ["CreatePeek(0, 0)", "CreatePeek(1, 1)", "AdvancePolicy", "AdvancePolicy", "DropPeek(1)",
                         "InterStep(0)", "DropPeek(0)"])
    told = narrate.narrate(steps[-1].action, steps[-2].state, steps[-1].state, cfg)
    assert told == ("the controller drops peek 0: its read hold at 0 goes, Drop(0) is queued on every process's "
                    "interactive stream, and AllowCompaction(index, 2) is sent, and the multiplexer forwards "
                    "Compact(1) to every maintenance runtime (capped at the as_of 1 of a peek process 0 has not "
                    "rendered)")
    assert told.count("Compact(1)") == 1
