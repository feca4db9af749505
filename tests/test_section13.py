"""Section 13 and 12.6 of the spec, piece by piece: every refusal of 13.1 and 12.6 is one usage
line naming the switch and the fix; each new action does what the spec says on a state built
for it; PeerHeld and ImportersRetired each fail on a model that breaks them (a sabotaged
step), and NoRegression and SinceLeStanding read ⊥ as no time."""

from __future__ import annotations

import pytest

from protocol import properties as props
from helpers import state
from protocol.engine.checker import explore
from protocol.model import actions
from protocol.model.commands import CREATE, CREATE_INDEX, DROP, HELLO, COMPACT, command_text
from protocol.model.config import Config, ConfigError
from protocol.configurations.named import lookup
from protocol.model.next import model_for, replay
from protocol.model.state import BOTTOM, DROPPED, LIVE, UNBORN, initial

SHIPPED = dict(compaction="broadcast", standing_hold=True)
STATELESS = dict(SHIPPED, multiplexer="stateless")
PEER = dict(STATELESS, index="created")
TLA = dict(SHIPPED, controller="free", reader_downgrade=True, ingest=False)

# (the configuration, words its one line must hold): 13.1's refusals 1 to 6, then 12.6's.
REFUSALS = [
    (dict(multiplexer="stateless"), "compaction=broadcast"),
    (dict(multiplexer="stateless", compaction="broadcast", cap=True), "drop cap or multiplexer"),
    (dict(multiplexer="stateless", compaction="broadcast", acquire="release_on_interactive"), "acquire=none"),
    (dict(index="created", compaction="broadcast", standing_hold=True), "multiplexer=stateless"),
    (dict(STATELESS, standing_hold=False, index="created"), "standing_hold"),
    (dict(SHIPPED, peer_by="reader"), "index=created"),
    (dict(SHIPPED, peer_at="as_of"), "index=created"),
    (dict(SHIPPED, since_rule="meet"), "index=created"),
    (dict(SHIPPED, pairing="none"), "index=created"),
    (dict(PEER, peer_by="reader", pairing="none"), "peer_by=publisher"),
    (dict(E=1, compaction="routed", standing_hold=True), "compaction=broadcast"),
    (dict(E=1, compaction="broadcast"), "standing_hold"),
    (dict(E=1, compaction="broadcast", standing_hold=True, cap=True), "drop cap"),
    (dict(E=1, compaction="broadcast", standing_hold=True, acquire="release_on_interactive"), "acquire=none"),
    (dict(SHIPPED, reconcile="none"), "E>=1"),
    (dict(SHIPPED, peer_reset="clear"), "E>=1"),
    (dict(STATELESS, seal="sink"), "drop seal"),
    (dict(STATELESS, alias="per_id"), "drop alias"),
    (dict(STATELESS, ctl_release="report"), "drop ctl_release"),
    (dict(STATELESS, floor="agent"), "drop floor"),
    (dict(STATELESS, reader_bound=False), "drop reader_bound"),
    (dict(STATELESS, controller="free"), "drop controller"),
    (dict(STATELESS, reader_downgrade=True), "drop reader_downgrade"),
    (dict(STATELESS, ingest=False), "drop ingest"),
    (dict(SHIPPED, E=1, reader_downgrade=True), "drop reader_downgrade"),
    # 12.6: the design's silent reconnection
    (dict(TLA, hello="silent"), "E>=1"),
    (dict(SHIPPED, E=1, hello="silent"), "controller=free"),
    (dict(TLA, E=1, D=2, hello="silent"), "D=1"),
    (dict(TLA, E=1, hello="silent", cap=True, compaction="routed", standing_hold=False), "cap or acquire"),
    (dict(TLA, E=1, hello="silent", ctl_release="report"), "drop ctl_release"),
    (dict(TLA, E=1, hello="silent", reconcile="none"), "hello=marker"),
]


@pytest.mark.parametrize("switches, words", REFUSALS, ids=[str(sorted(r[0].items())) for r in REFUSALS])
def test_each_refusal_is_one_line_naming_the_switch_and_the_fix(switches, words):
    with pytest.raises(ConfigError) as refused:
        Config(**switches)
    line = str(refused.value)
    assert "\n" not in line and words in line
    assert ": " in line and ("drop" in line or "set" in line)  # the fix


def test_what_the_refusals_leave_allowed():
    Config(**STATELESS)  # standing hold free with the stateless multiplexer alone
    Config(**dict(STATELESS, standing_hold=False))
    Config(**dict(SHIPPED, E=1))  # the split multiplexer under reconnection (13.5's comparison)
    Config(**dict(TLA, E=1, hello="silent"))
    Config(**dict(TLA, E=1, hello="silent", compaction="routed", standing_hold=False))
    Config(**dict(PEER, physical="from_upper", E=2, fairness=False))


def test_e_is_a_constant_shown_only_when_set():
    assert "E" not in Config().constants
    assert Config(**SHIPPED, E=2).constants["E"] == 2
    assert lookup("HoldsReconnect").config.constants == {"P": 1, "D": 1, "MaxTime": 2, "E": 1}


# ------------------------------------------------------------------ the actions


def test_create_index_goes_to_both_runtimes_and_starts_the_frontiers_at_its_as_of():
    cfg = Config(P=2, **PEER)
    s = initial(cfg)
    assert s.ixs == UNBORN and s.standing == (BOTTOM, BOTTOM) and s.published == (False, False)
    assert actions.create_peek(s, cfg, d=0, t=0) is None and actions.advance_policy(s, cfg) is None
    after = actions.create_index(s, cfg, a=1)
    assert (after.ixs, after.ix_as_of, after.policy, after.sent) == (LIVE, 1, 1, 1)
    assert after.mq == after.iq == (((CREATE_INDEX, 1),),) * 2
    assert actions.create_index(after, cfg, a=0) is None  # created once
    assert actions.publish(after, cfg, p=0) is None  # nothing published yet


def test_the_publisher_registers_the_peer_hold_at_the_join_and_the_interactive_runtime_takes_it_over():
    cfg = Config(P=1, **PEER)
    s = actions.create_index(initial(cfg), cfg, a=1)
    published = actions.maint_step(s, cfg, p=0)
    assert (published.published, published.since, published.writer, published.standing) == ((True,), (1,), (1,), (1,))
    taken = actions.inter_step(published, cfg, p=0)
    assert taken.standing == (1,) and taken.iq == ((),)
    # the other order: the peer recorded first registers its own hold at reg(p, a) = max(1, since 0)
    recorded = actions.inter_step(s, cfg, p=0)
    assert recorded.standing == (1,)
    assert actions.maint_step(recorded, cfg, p=0).standing == (1,)  # maintenance takes it over


def test_peer_at_and_peer_by_and_pairing_say_where_and_by_whom():
    s_of = lambda cfg: actions.create_index(initial(cfg), cfg, a=1)  # noqa: E731
    cfg = Config(P=1, **PEER, peer_at="minimum")
    assert actions.maint_step(s_of(cfg), cfg, p=0).standing == (0,)
    cfg = Config(P=1, **PEER, peer_by="reader")
    assert actions.maint_step(s_of(cfg), cfg, p=0).standing == (BOTTOM,)
    cfg = Config(P=1, **PEER, pairing="none")
    unpaired = actions.maint_step(s_of(cfg), cfg, p=0)
    assert (unpaired.orphan, unpaired.standing) == ((1,), (BOTTOM,))
    assert actions.inter_step(unpaired, cfg, p=0).standing == (1,)  # the peer registers another


def test_the_stateless_multiplexer_sends_peer_records_that_change_nothing_but_the_queue():
    cfg = Config(P=1, **STATELESS)
    created = actions.create_peek(initial(cfg), cfg, d=0, t=0)
    assert created.mq == created.iq == (((CREATE, 0, 0),),)
    dropped = actions.drop_peek(created, cfg, d=0)
    assert dropped.mq == (((CREATE, 0, 0), (DROP, 0)),)
    popped = actions.maint_step(dropped, cfg, p=0)
    assert popped == dropped._replace(mq=(((DROP, 0),),))


def test_reconnect_forgets_live_peeks_queues_hello_and_compacts_behind_it():
    cfg = Config(P=1, E=1, **STATELESS)
    s = actions.advance_policy(actions.create_peek(initial(cfg), cfg, d=0, t=0), cfg)
    after = actions.reconnect(s, cfg)
    assert (after.epoch, after.df, after.sent) == (1, (DROPPED,), 1)
    assert after.iq == (((CREATE, 0, 0), (HELLO,), (COMPACT, 1)),)
    assert actions.reconnect(after, cfg) is None  # E = 1 reconnection taken


def test_hello_reconciles_clears_as_its_switches_say():
    base = Config(P=1, E=1, **STATELESS)
    s = actions.inter_step(actions.reconnect(actions.create_peek(initial(base), base, d=0, t=0), base), base, p=0)
    assert s.readers == ((0,),)
    assert actions.inter_step(s, base, p=0).readers == ((None,),)  # reconciliation drops it
    kept = Config(P=1, E=1, **STATELESS, reconcile="none")
    assert actions.inter_step(s, kept, p=0).readers == ((0,),)
    cleared = Config(P=1, E=1, **STATELESS, peer_reset="clear")
    after = actions.inter_step(s, cleared, p=0)
    assert after.standing == (BOTTOM,) and after.readers == ((None,),)
    again = actions.inter_step(after._replace(iq=(((COMPACT, 2),),)), cleared, p=0)
    assert again.standing == (2,)  # the next compaction registers it again


def test_the_silent_reconnection_queues_nothing_and_commands_carry_their_epoch():
    cfg = Config(P=2, E=1, hello="silent", **TLA)
    created = actions.create_peek(initial(cfg), cfg, d=0, t=0)
    assert created.iq[0] == ((CREATE, 0, 0, "@", 0),) and command_text(created.iq[0][0]) == "Create(0, 0)@0"
    again = actions.reconnect(created, cfg)
    assert (again.epoch, again.df, again.iq) == (1, (UNBORN,), created.iq)
    recreated = actions.create_peek(again, cfg, d=0, t=0)
    assert recreated.iq[0][-1] == (CREATE, 0, 0, "@", 1)
    applied = actions.inter_step(actions.inter_step(actions.drop_peek(created, cfg, d=0), cfg, p=0), cfg, p=0)
    assert applied.drop_applied == (True, False)
    assert actions.create_peek(actions.reconnect(applied, cfg), cfg, d=0, t=0).drop_applied == (False, False)


# ------------------------------------------------------------------ the properties


def test_peer_held_fails_on_a_published_index_with_no_hold():
    cfg = Config(P=2, **PEER)
    s = state(cfg, published=(True, False), standing=(BOTTOM, BOTTOM))
    assert not props.by_name("PeerHeld").check(s, cfg)
    assert props.by_name("PeerHeld").witnesses(s, cfg) and "process 0" in props.by_name("PeerHeld").witnesses(s, cfg)[0]
    assert props.by_name("PeerHeld").check(s._replace(standing=(0, BOTTOM)), cfg)
    assert props.by_name("PeerHeld").check(s._replace(published=(False, False)), cfg)


def test_peer_held_belongs_to_section_13_with_the_standing_hold():
    assert props.by_name("PeerHeld").where(Config(**STATELESS))
    assert not props.by_name("PeerHeld").where(Config(**dict(STATELESS, standing_hold=False)))
    assert not props.by_name("PeerHeld").where(Config(**SHIPPED))
    assert props.by_name("ImportersRetired").where(Config(**SHIPPED, E=1))
    assert not props.by_name("ImportersRetired").where(Config(**TLA, E=1, hello="silent"))


def test_no_regression_and_since_le_standing_read_bottom_as_no_time():
    cfg = Config(P=1, E=1, **STATELESS, peer_reset="clear")
    s = state(cfg, standing=(1,), since=(1,))
    cleared = s._replace(standing=(BOTTOM,))
    assert props.no_regression(s, cleared) and props.no_regression(cleared, s)
    assert not props.no_regression(s, s._replace(standing=(0,)))
    assert props.since_le_standing(cleared) and not props.since_le_standing(s._replace(standing=(0,)))




def test_peer_held_fails_when_the_publisher_registers_nothing():
    """A sabotaged publication that never registers the hold: PeerHeld fails in 3 states."""
    cfg = Config(P=1, MaxTime=1, **PEER)
    model = model_for(cfg)

    def publish_unheld(s, cfg=cfg, p=0, record=None):
        after = actions.maint_step(s, cfg, p, record)
        if after is not None and s.mq[p] and s.mq[p][0][0] == CREATE_INDEX and s.standing[p] == BOTTOM:
            after = after._replace(standing=s.standing)
        return after

    run = search_with(model, "MaintStep", publish_unheld)
    assert "PeerHeld" in run.violated() and len(run.counterexample("PeerHeld")) == 3


def test_importers_retired_fails_where_hello_reconciles_nothing():
    """Section 13's reconnection with an interactive Hello that keeps every reader (a sabotaged
    step, not the switch): ImportersRetired fails with the lasso of the switch's refutation."""
    cfg = Config(P=1, MaxTime=1, E=1, **STATELESS)
    model = model_for(cfg)
    keeping = Config(P=1, MaxTime=1, E=1, **STATELESS, reconcile="none")

    def hello_keeps(s, cfg=cfg, p=0, record=None):
        return actions.inter_step(s, keeping, p, record)

    run = search_with(model, "InterStep", hello_keeps, record_edges=True)
    verdicts = run.decide_liveness(model)
    assert verdicts["ImportersRetired"].holds is False
    assert len(verdicts["ImportersRetired"].lasso.steps) == 7


def search_with(model, name, step, record_edges=False):
    """The readable search with the instances of action `name` stepping by `step` instead."""
    from functools import partial

    import attrs

    instances = [attrs.evolve(instance, step=partial(step, p=instance.process)) if instance.label.name == name
                 else instance for instance in model.instances]
    sabotaged = attrs.evolve(model, instances=instances)
    run = explore(sabotaged.initial_states, sabotaged.successors, sabotaged.invariants,
                  sabotaged.transition_properties, record_edges=record_edges)
    return run


def test_the_orientation_traces_of_13_5_are_runs_of_the_model():
    steps = replay(lookup("HoldsReconnectClear").config,
                   ["Reconnect", "CreatePeek(0, 0)", "DropPeek(0)", "AdvancePolicy", "MaintStep(0)", "MaintStep(0)",
                    "MaintStep(0)", "MaintStep(0)", "InterStep(0)", "Publish(0)"])
    last = steps[-1].state
    assert last.since == (1,) and (CREATE, 0, 0) in last.iq[0] and not props.i1(last)


def test_every_hold_kind_the_publisher_lists_declares_its_words():
    from protocol.model.actions import HOLD_WORDS, hold_words

    cfg = Config(P=1, **PEER, pairing="none")
    s = actions.maint_step(actions.create_index(initial(cfg), cfg, a=1), cfg, p=0)
    s = actions.inter_step(s, cfg, p=0)
    kinds = {kind for kind, _, _ in actions.publish_holds(s, cfg, 0)}
    assert kinds == {"writer", "peer hold", "orphan hold"} and kinds <= set(HOLD_WORDS)
    assert hold_words("orphan hold", None, 1) == "orphan hold 1 (no peer took it over)"
    with pytest.raises(KeyError, match="declares no words: add it to HOLD_WORDS"):
        hold_words("peer", 5, 0)  # a kind nobody declared: no guess from an index
