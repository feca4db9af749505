"""Liveness properties as leads-to (`P ~> Q`), checked under the configuration's fairness.

A liveness property is a function from a configuration to the leads-to
pairs (`protocol.engine.LeadsTo`) it is the conjunction of; the engine
(protocol/engine/liveness.py) decides each pair on the reachable graph.

Each pair also says which process it speaks of and what each side reads (the
globals, its process's locals, or both: `protocol.engine.LeadsTo`), so that
symmetry reduction can permute the pairs with the processes and the engines
can evaluate a predicate once per component (or pair of them) rather than once
per state. A side declared so must read nothing else: tests/test_leads_to_reads.py
evaluates every declared side both ways on the reachable states.
"""

from __future__ import annotations

from functools import partial

from protocol.engine import GLOBALS, PAIR, PROCESS, LeadsTo, Thresholds
from protocol.model.state import backed, index_count

__all__ = ["LeadsTo", "compaction_not_stalled", "importers_retired", "importers_retired_witnesses", "compaction_thresholds", "ctl_hold_released", "ctl_hold_released_witnesses", "imports_backed",
           "imports_backed_witnesses", "peeks_served", "peeks_served_witnesses"]


def sent_value(s) -> int:
    """What the controller has allowed every index id to compact up to (the least of its `sent`)."""
    sent = s.sent
    return sent if isinstance(sent, int) else min(sent)


def since_value(s, p: int) -> int:
    """Up to where process `p`'s publisher has realized compaction."""
    return s.since[p]


def sent_at_least(s, t: int) -> bool:
    """The controller has allowed every index id to compact up to `t`."""
    return sent_value(s) >= t


def since_at_least(s, p: int, t: int) -> bool:
    """Process `p`'s publisher has realized compaction up to `t`."""
    return since_value(s, p) >= t


def compaction_not_stalled(cfg) -> list[LeadsTo]:
    """What the controller allowed, every process's publisher eventually realizes.

    For every process p and time t, `sent >= t ~> since[p] >= t` (with two
    index ids, the least of their `sent`): a lagging interactive runtime may
    hold the publisher back, but only until the runtimes drain their queues
    (spec sections 5, 6 and 10.4).
    """
    return compaction_thresholds(cfg).pairs()


def compaction_thresholds(cfg) -> Thresholds:
    """CompactionNotStalled as a family judged by its form (P x MaxTime pairs, listed only on
    demand): t = 0 is left out, as it is met everywhere (since[p] >= 0)."""
    return Thresholds(sent_value, since_value, cfg.P, cfg.MaxTime, partial(compaction_pair, cfg))


def compaction_pair(cfg, p: int, t: int) -> LeadsTo:
    sent = "sent" if index_count(cfg) == 1 else "min(sent)"
    return LeadsTo(
        partial(sent_at_least, t=t),
        partial(since_at_least, p=p, t=t),
        f"{sent} >= {t} ~> since[{p}] >= {t}",
        process=p,
        form=("sent ~> since", t),
        premise_reads=GLOBALS,
        conclusion_reads=PROCESS,
    )


def registered(s, p: int, d: int) -> bool:
    """Peek d is rendered on process p: its import is registered."""
    return s.readers[p][d] is not None


def gone_or_backed(s, p: int, d: int) -> bool:
    """Peek d's import on p is gone (dropped) or reads the published arrangement."""
    return s.readers[p][d] is None or backed(s, p, d)


def imports_backed(cfg) -> list[LeadsTo]:
    """The import of a rendered peek eventually reads the published arrangement,
    unless the peek is dropped first (spec 10.4).

    For every process p and peek d, `d in readers[p] ~> d not in readers[p] or
    backed(p, d)`. A reader of Y that rendered before Y was published waits in a
    placeholder; the re-export must back it, not replace it.
    """
    return per_process_and_peek(cfg, (registered, PROCESS), (gone_or_backed, PAIR), "imports backed",
                                "{d} in readers[{p}] ~> {d} not in readers[{p}] or backed({p}, {d})")


def per_process_and_peek(cfg, premise: tuple, conclusion: tuple, form: str, text: str) -> list[LeadsTo]:
    """One leads-to pair per process p and peek d; `premise` and `conclusion` are each
    (predicate of (s, p, d), what it reads: PROCESS for p's locals alone, PAIR for the
    globals and p's locals), and `text` is formatted with p and d."""
    (premise, premise_reads), (conclusion, conclusion_reads) = premise, conclusion
    return [
        LeadsTo(
            partial(premise, p=p, d=d),
            partial(conclusion, p=p, d=d),
            text.format(p=p, d=d),
            process=p,
            form=(form, d),
            premise_reads=premise_reads,
            conclusion_reads=conclusion_reads,
        )
        for p in range(cfg.P)
        for d in range(cfg.D)
    ]


def imports_backed_witnesses(s, cfg=None) -> list[str]:
    """Every registered import that reads nothing: in a placeholder not yet backed, or stranded."""
    from protocol.model.state import INDEX_NAMES, stranded_on

    found = []
    for p, readers in enumerate(s.readers):
        for d, hold in enumerate(readers):
            if hold is None or backed(s, p, d):
                continue
            if d in stranded_on(s, p):
                found.append(f"peek {d} reads {INDEX_NAMES[1]} on process {p} through a placeholder that the "
                             f"re-export replaced: the reader is stranded, and its import never reads")
            else:
                found.append(f"peek {d} reads {INDEX_NAMES[1]} on process {p} through a placeholder "
                             f"not yet backed ({INDEX_NAMES[1]} is not yet published there)")
    return found


def parked_with_data(s, p: int, d: int) -> bool:
    """Peek d is parked on p although the data it reads is written (upper > as_of[d])."""
    return d in s.parked[p] and s.upper > s.as_of[d]


def not_parked(s, p: int, d: int) -> bool:
    return d not in s.parked[p]


def peeks_served(cfg) -> list[LeadsTo]:
    """Once the data a parked peek reads is written, the peek is eventually served,
    unless it is dropped first (spec 11.4).

    For every process p and peek d, `d in parked[p] and upper > as_of[d] ~> d not in
    parked[p]`. A wakeup that fires before the state it announces, or never for a
    re-exported id, leaves the peek parked forever.
    """
    return per_process_and_peek(cfg, (parked_with_data, PAIR), (not_parked, PROCESS), "peeks served",
                                "{d} in parked[{p}] and upper > as_of[{d}] ~> {d} not in parked[{p}]")


def peeks_served_witnesses(s, cfg=None) -> list[str]:
    """Every parked peek whose data is written: it waits for a wakeup."""
    return [f"peek {d} is parked on process {p} though upper {s.upper} is past its as_of {s.as_of[d]} "
            f"(the published upper there is {s.pub[p]}): no wakeup re-examines it"
            for p, parked in enumerate(s.parked) for d in sorted(parked) if s.upper > s.as_of[d]]


def dropped(s, d: int) -> bool:
    from protocol.model.state import DROPPED

    return s.df[d] == DROPPED


def hold_released(s, d: int) -> bool:
    from protocol.model.state import ctl_holds

    return not ctl_holds(s, d)


def ctl_hold_released(cfg) -> list[LeadsTo]:
    """The controller eventually frees a dropped peek's read hold (spec 11.4).

    For every peek d, `df[d] = Dropped ~> not held(d)`: with the hold freed only
    once every process reports the dataflow retired, a report that never arrives
    leaks the hold, and the index's since stops advancing.
    """
    return [
        LeadsTo(
            partial(dropped, d=d),
            partial(hold_released, d=d),
            f"df[{d}] = Dropped ~> not held({d})",
            process=None,
            form=("ctl hold released", d),
            premise_reads=GLOBALS,
            conclusion_reads=GLOBALS,
        )
        for d in range(cfg.D)
    ]


def ctl_hold_released_witnesses(s, cfg=None) -> list[str]:
    """Every dropped peek whose hold the controller still keeps, and who has not reported."""
    from protocol.model.state import DROPPED, ctl_holds

    found = []
    for d, status in enumerate(s.df):
        if status == DROPPED and ctl_holds(s, d):
            silent = [str(p) for p, reported in enumerate(s.reported) if d not in reported]
            found.append(f"peek {d} is dropped, but the controller still holds its read hold at {s.as_of[d]}: "
                         f"process{'es' if len(silent) > 1 else ''} {', '.join(silent)} never reported it retired")
    return found


def forgotten_reader(s, p: int, d: int) -> bool:
    """Peek d is registered on p, and the controller has let it go (dropped, or forgotten at a reconnection)."""
    from protocol.model.state import DROPPED

    return s.readers[p][d] is not None and s.df[d] == DROPPED


def not_registered(s, p: int, d: int) -> bool:
    return s.readers[p][d] is None


def importers_retired(cfg) -> list[LeadsTo]:
    """A reader the controller has let go of is eventually dropped on the replica (spec 13.4).

    For every process p and peek d, `d in readers[p] and df[d] = Dropped ~> d not in
    readers[p]`. A peek forgotten at a reconnection is never sent a Drop: only reconciliation
    at Hello can drop its reader, which otherwise pins compaction for good.
    """
    return per_process_and_peek(cfg, (forgotten_reader, PAIR), (not_registered, PROCESS), "importers retired",
                                "{d} in readers[{p}] and df[{d}] = Dropped ~> {d} not in readers[{p}]")


def importers_retired_witnesses(s, cfg=None) -> list[str]:
    """Every reader registered on the replica for a peek the controller has let go of."""
    from protocol.model.state import DROPPED

    return [f"peek {d}'s reader is still registered on process {p} at {hold}, though the controller let the "
            f"peek go: nobody will drop it"
            for p, readers in enumerate(s.readers) for d, hold in enumerate(readers)
            if hold is not None and s.df[d] == DROPPED]
