"""Section 11's actions and changed commands, one hand-built state each (spec 11.3)."""

from __future__ import annotations

from helpers import Compact, Create, Drop, per_process, state
from protocol.model import actions
from protocol.model.config import Config
from protocol.model.state import BOTTOM, DROPPED, LIVE, initial

SINK = Config(P=2, seal="sink")
TAP = Config(P=2, seal="tap")
EMPTY = frozenset()


def parked_on(cfg, p: int, *peeks):
    return per_process(cfg, EMPTY, **{f"p{p}": frozenset(peeks)})


def test_seal_publishes_upper_and_the_sink_notifies_what_a_parked_peek_reads():
    s = state(SINK, upper=1, df=(LIVE,), parked=parked_on(SINK, 0, 0), readers=per_process(SINK, (None,), p0=(0,)))
    after = actions.seal(s, SINK, 0)
    assert after.pub == (1, 0) and after.dirty == (frozenset({0}), EMPTY)
    assert actions.seal(after, SINK, 0) is None  # the guard: pub[0] < upper
    nothing_parked = actions.seal(s, SINK, 1)
    assert nothing_parked.pub == (0, 1) and nothing_parked.dirty == (EMPTY, EMPTY)  # no parked peek: nothing recorded


def test_the_tap_notifies_at_ingest_and_its_seal_notifies_nothing():
    s = state(TAP, df=(LIVE,), parked=parked_on(TAP, 1, 0), readers=per_process(TAP, (None,), p1=(0,)))
    ingested = actions.ingest(s, TAP)
    assert ingested.upper == 1 and ingested.dirty == (EMPTY, frozenset({0})) and ingested.pub == (0, 0)
    sealed = actions.seal(s._replace(upper=1), TAP, 1)
    assert sealed.pub == (0, 1) and sealed.dirty == (EMPTY, EMPTY)
    assert actions.ingest(initial(SINK), SINK).dirty == (EMPTY, EMPTY)  # the sink's Ingest notifies nobody


def test_wake_serves_only_what_it_can_and_consumes_the_notifications():
    s = state(SINK, upper=1, df=(LIVE,), parked=parked_on(SINK, 0, 0), dirty=(frozenset({0}), EMPTY),
              readers=per_process(SINK, (None,), p0=(0,)))
    still = actions.wake(s, SINK, 0)  # pub[0] = 0 is not past as_of 0: the peek stays parked
    assert still.parked == s.parked and still.dirty == (EMPTY, EMPTY)
    served = actions.wake(s._replace(pub=(1, 0)), SINK, 0)
    assert served.parked == (EMPTY, EMPTY)
    assert actions.wake(s, SINK, 1) is None  # nothing notified on process 1


def test_a_render_parks_unless_servable_and_declares_its_cut():
    cuts = Config(P=1, seal="sink", physical="from_cuts")
    s = state(cuts, df=(LIVE,), upper=2, pub=(1,), iq=((Create(0, 1),),), as_of=(1,))
    parked = actions.inter_step(s, cuts, 0)
    assert parked.parked == (frozenset({0}),) and parked.cut == ((1,),)
    served = actions.inter_step(s._replace(pub=(2,)), cuts, 0)
    assert served.parked == (EMPTY,) and served.cut == ((2,),)
    upper = cuts.evolve(cut_floor="upper")
    assert actions.inter_step(s, upper, 0).cut == ((2,),)


def test_a_drop_unparks_and_keeps_only_the_dirty_ids_still_read():
    s = state(SINK, df=(DROPPED,), iq=((Drop(0),), ()), parked=parked_on(SINK, 0, 0), dirty=(frozenset({0}), EMPTY),
              readers=per_process(SINK, (None,), p0=(0,)))
    after = actions.inter_step(s, SINK, 0)
    assert after.parked == (EMPTY, EMPTY) and after.dirty == (EMPTY, EMPTY) and after.readers[0] == (None,)


def test_the_last_retirement_report_frees_the_hold_and_compacts_in_the_same_step():
    cfg = Config(P=2, ctl_release="report")
    s = state(cfg, policy=1, df=(DROPPED,), iq=((Drop(0),), (Drop(0),)))
    first = actions.inter_step(s, cfg, 0)
    assert first.reports == (1,) and first.reported == (frozenset({0}), EMPTY) and first.sent == 0
    last = actions.inter_step(first, cfg, 1)
    assert last.reports == (2,) and last.sent == 1
    assert last.mq == ((Compact(1),), (Compact(1),))  # routed: maintenance only


def test_a_filtered_report_and_a_silent_cancel_report_nothing():
    owner = Config(P=1, ctl_release="report", report="owner_filter")
    s = state(owner, df=(DROPPED,), iq=((Drop(0),),))
    assert actions.inter_step(s, owner, 0).reports == (0,)
    silent = Config(P=1, seal="sink", ctl_release="report", report="silent_cancel")
    parked = state(silent, df=(DROPPED,), iq=((Drop(0),),), parked=(frozenset({0}),), readers=((0,),))
    assert actions.inter_step(parked, silent, 0).reports == (0,)
    served = parked._replace(parked=(EMPTY,))
    assert actions.inter_step(served, silent, 0).reports == (1,)  # a served peek still reports


def test_a_held_dropped_peek_holds_the_controller_back():
    cfg = Config(P=2, ctl_release="report")
    s = state(cfg, df=(LIVE,))
    dropped = actions.drop_peek(actions.advance_policy(s, cfg), cfg, 0)
    assert dropped.sent == 0  # the hold at 0 stays until both processes report
    assert actions.create_peek(dropped._replace(df=(DROPPED,)), cfg, d=0, t=0) is None  # ids are used once


def test_export_notifies_y_with_a_seal():
    cfg = Config(P=1, alias="per_id", seal="sink")
    s = initial(cfg)._replace(df=(LIVE,), ix=(1,), parked=(frozenset({0}),), readers=((0,),))
    assert actions.maint_step(s, cfg, 0).dirty == (frozenset({1}),)
    source = cfg.evolve(seal_alias="source")
    sealed = actions.seal(actions.maint_step(s, source, 0)._replace(upper=1, dirty=(EMPTY,)), source, 0)
    assert sealed.dirty == (EMPTY,)  # a seal notifies X only: the reader of Y is not marked
    closure = actions.seal(actions.maint_step(s, cfg, 0)._replace(upper=1, dirty=(EMPTY,)), cfg, 0)
    assert closure.dirty == (frozenset({1}),)


def test_publish_leaves_out_bottom_writers_and_unbound_readers():
    agent = Config(P=1, floor="agent")
    s = state(agent, acq=((1,),))
    assert actions.publish(s, agent, 0).since == (1,)  # only the acquired hold is left: since chases it
    assert actions.publish(state(agent), agent, 0) is None  # nothing left: since stays
    unbound = Config(P=1, reader_bound=False)
    assert actions.publish(state(unbound, writer=(2,), readers=((1,),)), unbound, 0).since == (2,)
    assert actions.publish(state(Config(P=1), writer=(2,), readers=((1,),)), Config(P=1), 0).since == (1,)
    assert state(agent).writer == (BOTTOM,)


def test_publish_with_cuts_merges_to_the_least_cut_or_the_coverage():
    cfg = Config(P=1, seal="sink", physical="from_cuts")
    assert actions.publish(state(cfg, upper=2, pub=(1,)), cfg, 0).physical == (1,)
    assert actions.publish(state(cfg, upper=2, pub=(2,), cut=((1,),), readers=((1,),)), cfg, 0).physical == (1,)
