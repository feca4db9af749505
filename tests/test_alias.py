"""Spec section 10: re-export aliases, placeholders and reconnection, action by action.

Hand-built states start from the spec's initial state of the configuration
(every maintenance queue holding Export) and override only what a test is about.
"""

from __future__ import annotations

import pytest

from helpers import state
from protocol.properties import i1, imports_backed, no_regression, type_ok
from protocol.properties.leads_to import imports_backed_witnesses
from protocol.model import actions
from protocol.model.commands import COMPACT, CREATE, EXPORT
from protocol.model.config import Config, ConfigError
from protocol.model.next import instances, replay
from protocol.render.narrate import narrate
from protocol.model.state import LIVE, backed, ctl_since, initial

PER_ID = Config(P=1, compaction="broadcast", standing_hold=True, alias="per_id")
SHARED = PER_ID.evolve(alias="shared")
OVERWRITE = PER_ID.evolve(reexport="overwrite")
RECONNECT = Config(P=1, cap=True, reconnect=True)


def test_with_an_alias_every_maintenance_queue_starts_with_export_and_frontiers_are_per_id():
    s = initial(PER_ID.evolve(P=2))
    assert s.mq == (((EXPORT,),), ((EXPORT,),))
    assert (s.policy, s.sent, s.writer, s.standing) == ((0, 0), (0, 0), ((0, 0),) * 2, ((0, 0),) * 2)
    assert (s.ix, s.stranded) == ((0,), (frozenset(), frozenset()))
    assert initial(SHARED).writer == (0,) and initial(SHARED).policy == (0, 0)


def test_without_an_alias_the_alias_variables_are_absent_and_the_state_is_section_3s():
    s = initial(Config())
    assert (s.ix, s.stranded, s.policy, s.mq) == (None, (None, None), 0, ((), ()))


@pytest.mark.parametrize("changes, fix", [
    (dict(reexport="overwrite"), "reexport"),
    (dict(reconnect=True), "reconnect"),
    (dict(cap=True, alias="per_id"), "cap"),
])
def test_a_switch_that_cannot_act_is_refused(changes, fix):
    with pytest.raises(ConfigError, match=f"switch {fix}=.* needs"):
        Config(**changes)


def test_the_enumeration_adds_the_index_id_to_create_and_advance_and_reconnect_after_ingest():
    labels = [str(label) for label, _ in instances(PER_ID)]
    assert labels[:6] == ["CreatePeek(0, 0, 0)", "CreatePeek(0, 0, 1)", "CreatePeek(0, 0, 2)",
                          "CreatePeek(0, 1, 0)", "CreatePeek(0, 1, 1)", "CreatePeek(0, 1, 2)"]
    assert labels[6:10] == ["DropPeek(0)", "AdvancePolicy(0)", "AdvancePolicy(1)", "Ingest"]
    assert [str(label) for label, _ in instances(RECONNECT)][5:7] == ["Ingest", "Reconnect"]


def test_create_peek_reads_no_earlier_than_its_own_ids_frontier():
    s = state(PER_ID, policy=(1, 0), sent=(1, 0))
    assert actions.create_peek(s, PER_ID, 0, 0, i=0) is None
    after = actions.create_peek(s, PER_ID, 0, 0, i=1)
    assert after.ix == (1,) and after.iq == (((CREATE, 0, 1, 0),),)
    assert ctl_since(after, 1) == 0 and ctl_since(after, 0) == 1


def test_advance_policy_sends_compaction_for_its_own_id_only():
    after = actions.advance_policy(state(PER_ID), PER_ID, i=1)
    assert (after.policy, after.sent) == ((0, 1), (0, 1))
    assert after.mq == (((EXPORT,), (COMPACT, 1, 1)),) and after.iq == (((COMPACT, 1, 1),),)


def test_drop_peek_recomputes_the_frontier_of_the_id_it_read():
    s = state(PER_ID, policy=(0, 2), df=(LIVE,), ix=(1,), as_of=(0,))
    after = actions.drop_peek(s, PER_ID, 0)
    assert after.sent == (0, 2)


def test_per_id_writer_and_standing_hold_keep_each_ids_frontier():
    s = state(PER_ID, mq=(((COMPACT, 0, 2),),), iq=(((COMPACT, 1, 1),),))
    s = actions.inter_step(actions.maint_step(s, PER_ID, 0), PER_ID, 0)
    assert (s.writer, s.standing) == (((2, 0),), ((0, 1),))
    assert actions.publish_bound(s, PER_ID, 0) == 0  # Y's writer entry still holds the point


def test_shared_writer_is_overwritten_even_lower_and_the_standing_hold_only_rises():
    s = state(SHARED, writer=(2,), standing=(2,), mq=(((COMPACT, 1, 1),),), iq=(((COMPACT, 1, 1),),))
    after = actions.inter_step(actions.maint_step(s, SHARED, 0), SHARED, 0)
    assert (after.writer, after.standing) == ((1,), (2,))
    assert not no_regression(s, after, SHARED)


def test_no_regression_compares_every_per_id_entry():
    before, after = state(PER_ID, writer=((2, 1),)), state(PER_ID, writer=((2, 0),))
    assert not no_regression(before, after, PER_ID)
    assert no_regression(after, before, PER_ID)


def test_export_with_adopt_backs_the_placeholder_in_place():
    s = state(PER_ID, df=(LIVE,), ix=(1,), readers=((0,),))
    assert not backed(s, 0, 0)
    after = actions.maint_step(s, PER_ID, 0)
    assert after.stranded == (frozenset(),) and backed(after, 0, 0)


def test_export_with_overwrite_strands_the_readers_of_y_in_the_placeholder_only():
    cfg = OVERWRITE.evolve(D=2)
    s = state(cfg, df=(LIVE, LIVE), ix=(1, 0), readers=((0, 0),))
    after = actions.maint_step(s, cfg, 0)
    assert after.stranded == (frozenset({0}),)
    assert not backed(after, 0, 0) and backed(after, 0, 1)
    assert "stranded" in imports_backed_witnesses(after, cfg)[0]


def test_drop_unstrands_the_reader():
    s = state(OVERWRITE, mq=((),), df=(LIVE,), ix=(1,), readers=((0,),), stranded=(frozenset({0}),),
              iq=((("Drop", 0),),))
    after = actions.inter_step(s, OVERWRITE, 0)
    assert after.readers == ((None,),) and after.stranded == (frozenset(),)


def test_a_stranded_reader_is_exempt_from_i1_and_does_not_bound_the_publisher():
    s = state(OVERWRITE, mq=((),), df=(LIVE,), ix=(1,), readers=((0,),), stranded=(frozenset({0}),),
              writer=((1, 1),), standing=((1, 1),))
    after = actions.publish(s, OVERWRITE, 0)
    assert after.since == (1,) and i1(after, OVERWRITE)
    assert not i1(after._replace(stranded=(frozenset(),)), OVERWRITE)


def test_reconnect_discards_the_cap_and_forwards_what_it_held_back():
    s = state(RECONNECT, caps=frozenset({0}), df=(2,), sent=1)
    after = actions.reconnect(s, RECONNECT)
    assert (after.caps, after.fwd, after.mq) == (frozenset(), 1, (((COMPACT, 1),),))
    assert actions.reconnect(after, RECONNECT) is None  # nothing left to discard


def test_imports_backed_pairs_say_which_reader_they_follow():
    pairs = imports_backed(PER_ID.evolve(P=2, D=2))
    assert [pair.text for pair in pairs][:1] == ["0 in readers[0] ~> 0 not in readers[0] or backed(0, 0)"]
    assert len(pairs) == 4


def test_every_alias_state_on_the_spec_orientation_runs_is_in_its_domain():
    steps = replay(SHARED, ["AdvancePolicy(0)", "CreatePeek(0, 1, 0)", "MaintStep(0)", "MaintStep(0)",
                            "InterStep(0)", "Publish(0)"])
    assert all(type_ok(step.state, SHARED) for step in steps)
    assert not i1(steps[-1].state, SHARED)  # spec 10.5's trace: I1 fails in 7 states


def test_the_narration_names_the_index_the_placeholder_and_the_stranded_reader():
    steps = replay(OVERWRITE, ["CreatePeek(0, 1, 0)", "InterStep(0)", "MaintStep(0)"])
    told = [narrate(step.action, before.state, step.state, OVERWRITE) for before, step in zip(steps, steps[1:])]
    assert told[0].startswith("the controller creates peek 0 reading Y at as_of 0")
    assert "creates a placeholder for Y" in told[1]
    assert "the placeholder is replaced, and the reader of Y registered in it (peek 0) is stranded" in told[2]


def test_the_narration_says_the_reconnection_discards_the_cap():
    steps = replay(RECONNECT, ["CreatePeek(0, 0)", "DropPeek(0)", "AdvancePolicy", "Reconnect"])
    assert "the reconnection discards the cap" in narrate(steps[-1].action, steps[-2].state, steps[-1].state, RECONNECT)
