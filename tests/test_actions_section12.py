"""Section 12's switches and actions, one hand-built state each (spec 12.1 and 12.3):
a free controller's AllowCompaction, CreatePeek and DropPeek, a retirement report that
frees a hold, ReaderDowngrade, Ingest without ingest, the labels and the enumeration."""

from __future__ import annotations

import pytest

from helpers import Compact, Create, Drop, per_process, state
from protocol.engine.checker import explore
from protocol.model import actions
from protocol.model.commands import COMPACT, EXPORT
from protocol.model.config import Config, ConfigError
from protocol.model.next import instances, model_for
from protocol.model.state import DROPPED, LIVE, initial

FREE = Config(controller="free")  # routed, as Config() is
FREE_BROADCAST = Config(controller="free", compaction="broadcast")
DOWNGRADE = Config(reader_downgrade=True)
EMPTY = frozenset()


# ---------------------------------------------------------------- the switches


@pytest.mark.parametrize("switches, named", [
    (dict(ingest=False, seal="sink"), "seal=none"),
    (dict(ingest=False, physical="from_upper"), "physical=from_since"),
])
def test_ingest_false_is_refused_where_a_switch_could_not_act(switches, named):
    with pytest.raises(ConfigError, match=f"switch ingest=False needs {named}"):
        Config(**switches)


def test_the_defaults_leave_the_actions_of_sections_4_to_11():
    names = {label.name for label, _ in instances(Config())}
    assert "AdvancePolicy" in names and "Ingest" in names
    assert not names & {"AllowCompaction", "ReaderDowngrade"}


def test_a_free_controller_has_allow_compaction_in_advance_policys_place():
    labels = [str(label) for label, _ in instances(FREE)]
    assert "AdvancePolicy" not in labels
    at = labels.index("AllowCompaction(1)")
    assert labels[at:at + 3] == ["AllowCompaction(1)", "AllowCompaction(2)", "Ingest"]
    assert labels[at - 1] == "DropPeek(0)"


def test_allow_compaction_takes_two_arguments_with_an_alias():
    labels = [str(label) for label, _ in instances(FREE.evolve(alias="per_id", P=1))]
    assert [label for label in labels if label.startswith("AllowCompaction")] == [
        "AllowCompaction(0, 1)", "AllowCompaction(0, 2)", "AllowCompaction(1, 1)", "AllowCompaction(1, 2)"]


def test_reader_downgrade_comes_after_every_other_instance_ordered_by_p_d_t():
    labels = [str(label) for label, _ in instances(DOWNGRADE)]
    assert labels[-4:] == ["ReaderDowngrade(0, 1)", "ReaderDowngrade(0, 2)",
                           "ReaderDowngrade(1, 1)", "ReaderDowngrade(1, 2)"]
    two = [str(label) for label, _ in instances(DOWNGRADE.evolve(D=2, P=1, MaxTime=1))]
    assert two[-2:] == ["ReaderDowngrade(0, 0, 1)", "ReaderDowngrade(0, 1, 1)"]
    aliased = [str(label) for label, _ in instances(DOWNGRADE.evolve(alias="per_id", P=1, MaxTime=1))]
    assert aliased[-1] == "ReaderDowngrade(0, 0, 1)"  # D = 1, but two indexes: three arguments


def test_without_ingest_there_is_no_ingest():
    assert "Ingest" not in {label.name for label, _ in instances(Config(ingest=False))}


def test_reader_downgrade_is_never_fair():
    model = model_for(DOWNGRADE)
    downgrades = [i for i in model.instances if i.label.name == "ReaderDowngrade"]
    assert downgrades and all(i.family is None for i in downgrades)
    assert all(i.family is not None for i in model.instances if i.label.name == "Publish")


# ---------------------------------------------------------------- AllowCompaction


def test_allow_compaction_goes_to_any_later_time_in_one_command():
    after = actions.allow_compaction(initial(FREE), FREE, t=2)
    assert after == state(FREE, sent=2, mq=((Compact(2),), (Compact(2),)))  # policy stays 0
    broadcast = actions.allow_compaction(initial(FREE_BROADCAST), FREE_BROADCAST, t=1)
    assert broadcast.mq == broadcast.iq == ((Compact(1),), (Compact(1),))


def test_allow_compaction_needs_a_later_time_up_to_max_time():
    s = state(FREE, sent=1)
    assert actions.allow_compaction(s, FREE, t=1) is None
    assert actions.allow_compaction(s, FREE, t=3) is None
    assert actions.allow_compaction(s, FREE, t=2).sent == 2


def test_allow_compaction_never_passes_the_controllers_own_read_hold():
    s = state(FREE, df=(LIVE,), as_of=(1,))
    assert actions.allow_compaction(s, FREE, t=2) is None
    assert actions.allow_compaction(s, FREE, t=1).sent == 1
    dropped = s._replace(df=(DROPPED,))  # the drop freed the hold
    assert actions.allow_compaction(dropped, FREE, t=2).sent == 2


def test_a_hold_kept_until_every_report_bounds_allow_compaction():
    cfg = FREE.evolve(ctl_release="report")
    s = state(cfg, df=(DROPPED,), as_of=(0,), reports=(1,))
    assert actions.allow_compaction(s, cfg, t=1) is None  # one process of two has reported
    assert actions.allow_compaction(s._replace(reports=(2,)), cfg, t=1).sent == 1


def test_a_hold_on_the_other_index_does_not_bound_allow_compaction():
    cfg = FREE.evolve(alias="per_id", P=1)
    s = state(cfg, df=(LIVE,), as_of=(0,), ix=(1,))
    assert actions.allow_compaction(s, cfg, t=1, i=1) is None
    after = actions.allow_compaction(s, cfg, t=2, i=0)
    assert after.sent == (2, 0) and after.mq == (((EXPORT,), (COMPACT, 0, 2)),)


def test_allow_compaction_under_the_cap_is_forwarded_by_forward():
    cfg = FREE.evolve(cap=True)
    s = state(cfg, df=(LIVE,), as_of=(1,), caps=frozenset({0}))
    after = actions.allow_compaction(s, cfg, t=1)
    assert after.sent == 1 and after.fwd == 1 and after.mq == ((Compact(1),), (Compact(1),))
    capped = state(cfg, df=(DROPPED,), as_of=(0,), caps=frozenset({0}))
    held_back = actions.allow_compaction(capped, cfg, t=2)
    assert held_back.sent == 2 and held_back.fwd == 0 and held_back.mq == ((), ())


# ---------------------------------------------------------------- CreatePeek, DropPeek, reports


def test_a_free_controller_reads_only_where_it_has_not_released():
    s = state(FREE, sent=1)
    assert actions.create_peek(s, FREE, d=0, t=0) is None
    after = actions.create_peek(s, FREE, d=0, t=1)
    assert after.df == (LIVE,) and after.as_of == (1,) and after.iq == ((Create(0, 1),), (Create(0, 1),))


def test_a_free_controllers_drop_sends_no_compaction():
    s = state(FREE, df=(LIVE,))
    after = actions.drop_peek(s, FREE, d=0)
    assert after == state(FREE, df=(DROPPED,), iq=((Drop(0),), (Drop(0),)))
    policy = state(Config(), policy=1, df=(LIVE,))
    assert actions.drop_peek(policy, Config(), d=0).sent == 1  # under a policy the drop compacts


def test_the_last_report_runs_no_compact_under_a_free_controller():
    cfg = FREE.evolve(ctl_release="report", P=1)
    s = state(cfg, df=(DROPPED,), iq=((Drop(0),),))
    after = actions.inter_step(s, cfg, 0)
    assert after.reports == (1,) and after.sent == 0 and after.mq == ((),)


# ---------------------------------------------------------------- ReaderDowngrade


def test_reader_downgrade_raises_a_registration_to_any_later_time():
    s = state(DOWNGRADE, df=(LIVE,), readers=per_process(DOWNGRADE, (None,), p1=(0,)))
    after = actions.reader_downgrade(s, DOWNGRADE, p=1, d=0, t=2)
    assert after == s._replace(readers=((None,), (2,)))
    assert actions.reader_downgrade(after, DOWNGRADE, p=1, d=0, t=2) is None  # not above the registration
    assert actions.reader_downgrade(s, DOWNGRADE, p=1, d=0, t=3) is None  # past MaxTime
    assert actions.reader_downgrade(s, DOWNGRADE, p=0, d=0, t=1) is None  # not rendered on process 0


def test_reader_downgrade_keeps_the_declared_cut():
    cfg = Config(P=1, seal="sink", physical="from_cuts", reader_downgrade=True)
    s = state(cfg, df=(LIVE,), readers=((0,),), cut=((0,),))
    assert actions.reader_downgrade(s, cfg, p=0, d=0, t=1) == s._replace(readers=((1,),))


def test_a_parked_reader_has_read_nothing_yet():
    cfg = Config(P=1, seal="sink", reader_downgrade=True)
    s = state(cfg, df=(LIVE,), readers=((0,),), parked=(frozenset({0}),))
    assert actions.reader_downgrade(s, cfg, p=0, d=0, t=1) is None
    assert actions.reader_downgrade(s._replace(parked=(EMPTY,)), cfg, p=0, d=0, t=1).readers == ((1,),)


def test_a_reader_in_an_unbacked_placeholder_has_read_nothing_yet():
    cfg = Config(P=1, alias="per_id", reexport="overwrite", reader_downgrade=True)
    placeholder = state(cfg, df=(LIVE,), ix=(1,), readers=((0,),))  # Export still queued
    assert actions.reader_downgrade(placeholder, cfg, p=0, d=0, t=1) is None
    stranded = placeholder._replace(mq=((),), stranded=(frozenset({0}),))
    assert actions.reader_downgrade(stranded, cfg, p=0, d=0, t=1) is None
    backed = placeholder._replace(mq=((),))
    assert actions.reader_downgrade(backed, cfg, p=0, d=0, t=1).readers == ((1,),)


# ---------------------------------------------------------------- the whole relation


@pytest.mark.parametrize("cfg", [
    Config(compaction="broadcast", standing_hold=True, controller="free", reader_downgrade=True, ingest=False),
    Config(P=1, D=2, controller="free", reader_downgrade=True, ctl_release="report"),
    Config(P=1, controller="free", cap=True, reader_downgrade=True),
], ids=["tla-holds", "report-D2-P1", "cap-P1"])
def test_no_section_12_action_is_a_self_loop_and_no_two_lead_to_one_state(cfg):
    model = model_for(cfg)
    seen = []

    def checked(s):
        out = model.successors(s)
        targets = [after for _, after in out]
        assert s not in targets and len(set(targets)) == len(targets), s
        seen.append(len(out))
        return out

    run = explore(model.initial_states, checked)
    assert run.complete and sum(seen) == run.transitions > 100


def test_reader_downgrade_instances_count_against_the_instances_listed_in_memory():
    Config(P=8, D=1000, MaxTime=200)  # 201,000 CreatePeek instances: allowed
    with pytest.raises(ConfigError, match="1,600,000 ReaderDowngrade instances, more than the 1,048,576"):
        Config(P=8, D=1000, MaxTime=200, reader_downgrade=True)
