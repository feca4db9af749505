"""Each action of model-spec section 4: its guard, and its effect on hand-built states.

Every expected successor is written out in full from the spec's text, so a
test fails on any variable the action changes that the spec does not ask for.
"""

from __future__ import annotations

import pytest

from helpers import Acquire, Compact, Create, Drop, Release, per_process, state
from protocol.model import actions
from protocol.engine.checker import explore
from protocol.model.config import Config
from protocol.model.next import model_for
from protocol.model.state import DROPPED, LIVE, UNBORN

ROUTED = Config()
BROADCAST = Config(compaction="broadcast")
STANDING = Config(compaction="broadcast", standing_hold=True)
CAP = Config(cap=True)
ACQUIRE_INTERACTIVE = Config(acquire="release_on_interactive")
ACQUIRE_MAINTENANCE = Config(acquire="release_on_maintenance")
TWO_PEEKS = Config(D=2)

# ---------------------------------------------------------------- CreatePeek


def test_create_peek_needs_the_lowest_unborn_id():
    s = state(TWO_PEEKS)
    assert actions.create_peek(s, TWO_PEEKS, 1, 0) is None
    assert actions.create_peek(s, TWO_PEEKS, 0, 0) is not None


@pytest.mark.parametrize("status", [LIVE, DROPPED])
def test_create_peek_moves_on_to_the_next_id_once_the_lower_is_born(status):
    s = state(TWO_PEEKS, df=(status, UNBORN))
    assert actions.create_peek(s, TWO_PEEKS, 0, 0) is None
    assert actions.create_peek(s, TWO_PEEKS, 1, 0) is not None


def test_create_peek_of_a_born_id_is_disabled():
    s = state(ROUTED, df=(DROPPED,))
    assert all(actions.create_peek(s, ROUTED, 0, t) is None for t in range(3))


def test_create_peek_reads_no_earlier_than_the_controllers_since():
    s = state(ROUTED, policy=1, sent=1)
    assert actions.create_peek(s, ROUTED, 0, 0) is None
    assert actions.create_peek(s, ROUTED, 0, 1) is not None


def test_create_peek_may_read_at_a_live_peeks_as_of_below_the_policy():
    s = state(TWO_PEEKS, policy=2, df=(LIVE, UNBORN))  # ctl_since = as_of[0] = 0
    assert actions.create_peek(s, TWO_PEEKS, 1, 0) is not None


def test_create_peek_reads_no_later_than_max_time():
    s = state(ROUTED)
    assert actions.create_peek(s, ROUTED, 0, 3) is None
    assert actions.create_peek(s, ROUTED, 0, 2) is not None


def test_create_peek_without_acquire_or_cap_queues_create_on_every_interactive_stream():
    s = state(ROUTED, iq=((Compact(1),), ()))
    assert actions.create_peek(s, ROUTED, 0, 1) == s._replace(
        df=(LIVE,), as_of=(1,), iq=((Compact(1), Create(0, 1)), (Create(0, 1),))
    )


@pytest.mark.parametrize("cfg", [ACQUIRE_INTERACTIVE, ACQUIRE_MAINTENANCE], ids=lambda c: c.acquire)
def test_create_peek_with_acquire_queues_acquire_on_every_maintenance_stream(cfg):
    s = state(cfg, mq=((), (Compact(1),)))
    assert actions.create_peek(s, cfg, 0, 2) == s._replace(
        df=(LIVE,),
        as_of=(2,),
        iq=((Create(0, 2),), (Create(0, 2),)),
        mq=((Acquire(0, 2),), (Compact(1), Acquire(0, 2))),
    )


def test_create_peek_with_cap_caps_at_the_new_peek():
    s = state(CAP)
    assert actions.create_peek(s, CAP, 0, 1) == s._replace(
        df=(LIVE,), as_of=(1,), iq=((Create(0, 1),), (Create(0, 1),)), caps=frozenset({0})
    )


# ------------------------------------------------------------------ DropPeek


@pytest.mark.parametrize("status", [UNBORN, DROPPED])
def test_drop_peek_needs_a_live_peek(status):
    assert actions.drop_peek(state(ROUTED, df=(status,)), ROUTED, 0) is None


def test_drop_peek_queues_drop_and_sends_no_compaction_when_the_since_stays():
    s = state(ROUTED, df=(LIVE,))  # policy 0: nothing to compact
    assert actions.drop_peek(s, ROUTED, 0) == s._replace(
        df=(DROPPED,), iq=((Drop(0),), (Drop(0),))
    )


def test_drop_peek_releases_the_hold_and_compacts_on_maintenance_when_routed():
    s = state(ROUTED, policy=2, df=(LIVE,), as_of=(1,), sent=1)
    assert actions.drop_peek(s, ROUTED, 0) == s._replace(
        df=(DROPPED,), sent=2, iq=((Drop(0),), (Drop(0),)), mq=((Compact(2),), (Compact(2),))
    )


# Where DropPeek(0) puts its Drop, Release and Compact(1), per switch (the same on every p).
DROP_ROUTING = {
    "broadcast": (BROADCAST, (Drop(0), Compact(1)), (Compact(1),)),
    "release on interactive, after the drop": (
        ACQUIRE_INTERACTIVE, (Drop(0), Release(0)), (Compact(1),)),
    "release on maintenance, before the compaction": (
        ACQUIRE_MAINTENANCE, (Drop(0),), (Release(0), Compact(1))),
}


@pytest.mark.parametrize("cfg, iq, mq", DROP_ROUTING.values(), ids=DROP_ROUTING.keys())
def test_drop_peek_routes_drop_release_and_compaction(cfg, iq, mq):
    s = state(cfg, policy=1, df=(LIVE,))
    assert actions.drop_peek(s, cfg, 0) == s._replace(
        df=(DROPPED,), sent=1, iq=(iq, iq), mq=(mq, mq)
    )


def test_drop_peek_compacts_only_to_the_next_live_peeks_as_of():
    s = state(TWO_PEEKS, policy=2, df=(LIVE, LIVE), as_of=(0, 1))
    assert actions.drop_peek(s, TWO_PEEKS, 0) == s._replace(
        df=(DROPPED, LIVE), sent=1, iq=((Drop(0),), (Drop(0),)), mq=((Compact(1),), (Compact(1),))
    )
    held_lower = actions.drop_peek(s, TWO_PEEKS, 1)  # peek 0 still holds at 0
    assert held_lower == s._replace(df=(LIVE, DROPPED), iq=((Drop(1),), (Drop(1),)))


def test_drop_peek_with_cap_forwards_through_the_cap():
    s = state(CAP, policy=1, df=(LIVE,))  # the cap retired already: caps empty
    assert actions.drop_peek(s, CAP, 0) == s._replace(
        df=(DROPPED,), sent=1, fwd=1, iq=((Drop(0),), (Drop(0),)), mq=((Compact(1),), (Compact(1),))
    )


# ------------------------------------------------------------- AdvancePolicy


def test_advance_policy_stops_at_max_time():
    assert actions.advance_policy(state(ROUTED, policy=2, sent=2), ROUTED) is None


def test_advance_policy_compacts_when_nothing_holds():
    s = state(ROUTED)
    assert actions.advance_policy(s, ROUTED) == s._replace(
        policy=1, sent=1, mq=((Compact(1),), (Compact(1),))
    )


def test_advance_policy_under_a_live_peek_sends_nothing():
    s = state(BROADCAST, df=(LIVE,))
    assert actions.advance_policy(s, BROADCAST) == s._replace(policy=1)


# -------------------------------------------------------------------- Ingest


def test_ingest_advances_the_upper_and_nothing_else():
    s = state(ROUTED, upper=1)
    assert actions.ingest(s, ROUTED) == s._replace(upper=2)
    assert actions.ingest(s._replace(upper=2), ROUTED) is None


# ------------------------------------------------------------------- Compact


@pytest.mark.parametrize("cfg", [ROUTED, BROADCAST, CAP], ids=["routed", "broadcast", "cap"])
def test_compact_sends_nothing_unless_the_since_rose_past_sent(cfg):
    s = state(cfg, policy=1, sent=1, fwd=1)
    assert actions.compact(s, cfg) == s


def test_compact_routed_goes_to_maintenance_only():
    s = state(ROUTED, policy=2, sent=1)
    assert actions.compact(s, ROUTED) == s._replace(sent=2, mq=((Compact(2),), (Compact(2),)))


def test_compact_broadcast_goes_to_both_runtimes():
    s = state(BROADCAST, policy=2, sent=1)
    both = ((Compact(2),), (Compact(2),))
    assert actions.compact(s, BROADCAST) == s._replace(sent=2, mq=both, iq=both)


def test_compact_with_cap_forwards_to_maintenance_whatever_compaction_says():
    cfg = Config(cap=True, compaction="broadcast")
    s = state(cfg, policy=2, sent=1, fwd=1)
    assert actions.compact(s, cfg) == s._replace(sent=2, fwd=2, mq=((Compact(2),), (Compact(2),)))


# ------------------------------------------------------------------- Forward


def test_forward_caps_at_the_lowest_capped_as_of():
    cfg = Config(cap=True, D=2)
    s = state(cfg, sent=2, df=(LIVE, LIVE), as_of=(2, 1), caps=frozenset({0, 1}))
    assert actions.forward(s, cfg) == s._replace(fwd=1, mq=((Compact(1),), (Compact(1),)))


def test_forward_sends_nothing_when_the_cap_holds_at_fwd():
    s = state(CAP, sent=2, df=(LIVE,), caps=frozenset({0}))
    assert actions.forward(s, CAP) == s


def test_forward_without_caps_forwards_sent():
    s = state(CAP, sent=2, fwd=1)
    assert actions.forward(s, CAP) == s._replace(fwd=2, mq=((Compact(2),), (Compact(2),)))


# ----------------------------------------------------------------- MaintStep


def test_maint_step_needs_a_queued_command():
    s = state(ROUTED, mq=((Compact(1),), ()))
    assert actions.maint_step(s, ROUTED, 1) is None
    assert actions.maint_step(s, ROUTED, 0) is not None


def test_maint_step_applies_compact_to_the_writer_and_pops_only_the_head():
    s = state(ROUTED, mq=((Compact(1), Compact(2)), (Compact(1),)))
    assert actions.maint_step(s, ROUTED, 0) == s._replace(
        mq=((Compact(2),), (Compact(1),)), writer=(1, 0)
    )


def test_maint_step_acquire_installs_the_hold():
    s = state(ACQUIRE_INTERACTIVE, mq=((), (Acquire(0, 1),)))
    assert actions.maint_step(s, ACQUIRE_INTERACTIVE, 1) == s._replace(
        mq=((), ()), acq=((None,), (1,))
    )


def test_maint_step_acquire_is_consumed_by_a_release_that_overtook_it():
    s = state(ACQUIRE_INTERACTIVE, mq=((Acquire(0, 1),), ()),
              released=per_process(ACQUIRE_INTERACTIVE, frozenset(), p0=frozenset({0})))
    assert actions.maint_step(s, ACQUIRE_INTERACTIVE, 0) == s._replace(
        mq=((), ()), released=(frozenset(), frozenset())
    )


def test_maint_step_release_removes_the_acquired_hold():
    s = state(ACQUIRE_MAINTENANCE, mq=((Release(0),), ()), acq=((1,), (1,)))
    assert actions.maint_step(s, ACQUIRE_MAINTENANCE, 0) == s._replace(
        mq=((), ()), acq=((None,), (1,))
    )


def test_maint_step_release_before_the_acquire_is_recorded():
    s = state(ACQUIRE_MAINTENANCE, mq=((Release(0), Acquire(0, 0)), ()))
    assert actions.maint_step(s, ACQUIRE_MAINTENANCE, 0) == s._replace(
        mq=((Acquire(0, 0),), ()), released=(frozenset({0}), frozenset())
    )


# ----------------------------------------------------------------- InterStep


def test_inter_step_needs_a_queued_command():
    s = state(ROUTED, iq=((), (Create(0, 0),)))
    assert actions.inter_step(s, ROUTED, 0) is None
    assert actions.inter_step(s, ROUTED, 1) is not None


def test_inter_step_create_renders_the_reader():
    s = state(ROUTED, df=(LIVE,), as_of=(1,), iq=((Create(0, 1), Drop(0)), ()))
    assert actions.inter_step(s, ROUTED, 0) == s._replace(
        iq=((Drop(0),), ()), readers=((1,), (None,))
    )


def test_inter_step_create_on_process_0_retires_the_cap_and_forwards():
    s = state(CAP, sent=2, df=(LIVE,), iq=((Create(0, 0),), ()), caps=frozenset({0}))
    assert actions.inter_step(s, CAP, 0) == s._replace(
        iq=((), ()), readers=((0,), (None,)), caps=frozenset(), fwd=2,
        mq=((Compact(2),), (Compact(2),)),
    )


def test_inter_step_create_on_another_process_leaves_the_cap():
    s = state(CAP, sent=2, df=(LIVE,), iq=((), (Create(0, 0),)), caps=frozenset({0}))
    assert actions.inter_step(s, CAP, 1) == s._replace(iq=((), ()), readers=((None,), (0,)))


def test_inter_step_retiring_one_cap_forwards_up_to_the_next():
    cfg = Config(cap=True, D=2)
    s = state(cfg, sent=2, df=(LIVE, LIVE), as_of=(0, 1), iq=((Create(0, 0),), ()),
              caps=frozenset({0, 1}))
    assert actions.inter_step(s, cfg, 0) == s._replace(
        iq=((), ()), readers=((0, None), (None, None)), caps=frozenset({1}), fwd=1,
        mq=((Compact(1),), (Compact(1),)),
    )


def test_inter_step_drop_unregisters_the_reader():
    s = state(ROUTED, iq=((), (Drop(0),)), readers=((0,), (0,)))
    assert actions.inter_step(s, ROUTED, 1) == s._replace(iq=((), ()), readers=((0,), (None,)))


def test_inter_step_compact_with_standing_hold_records_it():
    s = state(STANDING, iq=((Compact(2),), ()), standing=(1, 0))
    assert actions.inter_step(s, STANDING, 0) == s._replace(iq=((), ()), standing=(2, 0))


def test_inter_step_compact_without_standing_hold_only_pops():
    s = state(BROADCAST, iq=((Compact(2),), ()))
    assert actions.inter_step(s, BROADCAST, 0) == s._replace(iq=((), ()))


def test_inter_step_release_is_recorded_for_maintenance():
    s = state(ACQUIRE_INTERACTIVE, iq=((), (Release(0),)))
    assert actions.inter_step(s, ACQUIRE_INTERACTIVE, 1) == s._replace(
        iq=((), ()), released=(frozenset(), frozenset({0}))
    )


# ------------------------------------------------------------------- Reclaim


@pytest.mark.parametrize(
    "acq, released",
    [((None, None), frozenset()), ((0, None), frozenset()), ((None, None), frozenset({0})),
     ((0, None), frozenset({1}))],
    ids=["nothing", "acquired only", "released only", "different peeks"],
)
def test_reclaim_needs_a_peek_both_acquired_and_released(acq, released):
    cfg = Config(acquire="release_on_interactive", D=2)
    s = state(cfg, acq=(acq, (None, None)), released=(released, frozenset()))
    assert actions.reclaim(s, cfg, 0) is None


def test_reclaim_removes_every_peek_both_acquired_and_released_only():
    cfg = Config(acquire="release_on_interactive", D=2)
    s = state(cfg, acq=((0, None), (0, 1)), released=(frozenset({0, 1}), frozenset({1})))
    assert actions.reclaim(s, cfg, 1) == s._replace(
        acq=((0, None), (0, None)), released=(frozenset({0, 1}), frozenset())
    )
    both = s._replace(acq=((0, 1), (0, 1)))
    assert actions.reclaim(both, cfg, 0) == both._replace(
        acq=((None, None), (0, 1)), released=(frozenset(), frozenset({1}))
    )


# ------------------------------------------------------------------- Publish


def test_publish_follows_the_writer_and_physical_follows_since_up_to_upper():
    s = state(ROUTED, writer=(2, 0), upper=1)
    assert actions.publish(s, ROUTED, 0) == s._replace(since=(2, 0), physical=(1, 0))


def test_publish_is_bounded_by_the_standing_hold_only_with_standing_hold():
    s = state(STANDING, writer=(2, 0), standing=(1, 0), upper=2)
    assert actions.publish(s, STANDING, 0) == s._replace(since=(1, 0), physical=(1, 0))
    assert actions.publish(s, BROADCAST, 0) == s._replace(since=(2, 0), physical=(2, 0))


def test_publish_is_bounded_by_rendered_readers():
    s = state(ROUTED, writer=(0, 2), readers=((None,), (1,)), upper=2)
    assert actions.publish(s, ROUTED, 1) == s._replace(since=(0, 1), physical=(0, 1))


def test_publish_is_bounded_by_acquired_holds():
    s = state(ACQUIRE_INTERACTIVE, writer=(2, 2), acq=((1,), (None,)), upper=2)
    assert actions.publish(s, ACQUIRE_INTERACTIVE, 0) == s._replace(since=(1, 0), physical=(1, 0))


def test_publish_never_lowers_since():
    s = state(ROUTED, writer=(1, 0), since=(2, 0), physical=(1, 0), upper=2)
    assert actions.publish(s, ROUTED, 0) == s._replace(physical=(2, 0))


def test_publish_from_upper_forwards_physical_past_since():
    cfg = Config(physical="from_upper")
    s = state(cfg, upper=1)
    assert actions.publish(s, cfg, 0) == s._replace(physical=(1, 0))


def test_publish_never_lowers_physical():
    s = state(ROUTED, writer=(2, 0), since=(2, 0), physical=(2, 0), upper=0)
    assert actions.publish(s, ROUTED, 0) is None


def test_publish_is_disabled_when_nothing_changes():
    assert actions.publish(state(ROUTED, upper=2), ROUTED, 0) is None
    caught_up = state(ROUTED, writer=(2, 0), since=(2, 0), physical=(1, 0), upper=1)
    assert actions.publish(caught_up, ROUTED, 0) is None


# --------------------------------------------------------- no self-loops


def _checking_successors(successors, seen):
    """`successors`, asserting on the way that no step is a self-loop or a duplicate."""

    def checked(s):
        out = successors(s)
        targets = [after for _, after in out]
        assert s not in targets, f"a self-loop at {s}: {[str(l) for l, a in out if a == s]}"
        assert len(set(targets)) == len(targets), f"two actions lead to one state from {s}"
        seen.append(len(out))
        return out

    return checked


@pytest.mark.parametrize(
    "cfg",
    [
        Config(compaction="routed"),
        Config(cap=True),
        Config(compaction="broadcast", standing_hold=True, P=1),
        Config(acquire="release_on_interactive", P=1),
        Config(acquire="release_on_maintenance", P=1),
    ],
    ids=["routed", "cap", "holds-P1", "acquire-interactive-P1", "acquire-maintenance-P1"],
)
def test_no_action_is_a_self_loop_and_no_two_lead_to_one_state(cfg):
    model = model_for(cfg)
    seen: list[int] = []
    run = explore(model.initial_states, _checking_successors(model.successors, seen))
    assert run.complete and len(seen) == run.distinct_states > 100
    assert sum(seen) == run.transitions  # so transitions are the edges (spec section 7)
