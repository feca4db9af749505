"""States a reviewer expects to exist: named state predicates, checked like an invariant's negation.

A configuration lists in the manifest (`reachable = [...]`) the predicates
its reachable states must satisfy somewhere: a model whose peeks are never
created, never rendered or whose compaction never reaches the publisher
checks nothing of the protocol, however many properties hold. `check`
reports the depth at which each was first reached, and a predicate never
reached makes the configuration not as expected, as a violated invariant would.

Each predicate takes `(state, cfg)` and treats the processes alike (some
process, every process), so that under symmetry reduction one state per orbit
answers for all of it. Its docstring is how the summary names it.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

from protocol.model.state import BOTTOM, LIVE, UNBORN, held, stranded_on


def peek_created(s, cfg) -> bool:
    """a peek is created"""
    return any(status != UNBORN for status in s.df)


def peek_live(s, cfg) -> bool:
    """a peek holds its read hold"""
    return LIVE in s.df


def peek_rendered(s, cfg) -> bool:
    """a peek is rendered"""
    return any(held(readers) for readers in s.readers)


def peek_dropped_while_rendered(s, cfg) -> bool:
    """a dropped peek is still rendered"""
    return any(status != LIVE and status != UNBORN and any(readers[d] is not None for readers in s.readers)
               for d, status in enumerate(s.df))


def compaction_sent(s, cfg) -> bool:
    """compaction is allowed"""
    sent = s.sent
    return (sent if isinstance(sent, int) else max(sent)) >= 1


def since_advanced(s, cfg) -> bool:
    """a published since advances"""
    return any(since >= 1 for since in s.since)


def hold_acquired(s, cfg) -> bool:
    """an acquired hold is installed"""
    return any(held(acquired) for acquired in s.acq)


def reader_stranded(s, cfg) -> bool:
    """a reader is stranded"""
    return any(stranded_on(s, p) for p in range(cfg.P))


def peek_capped(s, cfg) -> bool:
    """the cap holds a peek"""
    return bool(s.caps)


def peek_parked(s, cfg) -> bool:
    """a peek is parked on the seal"""
    return any(parked for parked in s.parked if parked)


def some_parked_with_data(s, cfg) -> bool:
    """a parked peek's data is written"""
    return any(s.upper > s.as_of[d] for parked in s.parked if parked for d in parked)


def peek_served(s, cfg) -> bool:
    """a rendered peek is served"""
    return any(d not in parked for readers, parked in zip(s.readers, s.parked) if parked is not None
               for d in held(readers))


def wakeup_pending(s, cfg) -> bool:
    """a notification waits for the peek server"""
    return any(dirty for dirty in s.dirty if dirty)


def retirement_reported(s, cfg) -> bool:
    """a retirement is reported"""
    return any(reported for reported in s.reported if reported)


def hold_freed_by_reports(s, cfg) -> bool:
    """every process reported a peek retired"""
    return s.reports is not None and any(count == cfg.P for count in s.reports)


def cut_declared(s, cfg) -> bool:
    """a reader declares a cut"""
    return any(held(cut) for cut in s.cut if cut is not None)


def physical_advanced(s, cfg) -> bool:
    """a physical compaction frontier advances"""
    return any(physical >= 1 for physical in s.physical)


def writer_floor_absent(s, cfg) -> bool:
    """a publisher has no writer floor yet and a hold to chase"""
    return any(BOTTOM in ((writer,) if isinstance(writer, int) else writer) and (held(acq) or held(readers))
               for writer, acq, readers in zip(s.writer, s.acq, s.readers))


def reader_advanced(s, cfg) -> bool:
    """a reader's registration has risen above its as_of"""
    return any(t is not None and t > s.as_of[d] for readers in s.readers for d, t in enumerate(readers))


def since_past_reader_as_of(s, cfg) -> bool:
    """a published since has passed a registered reader's as_of, not its advanced registration"""
    return any(t is not None and s.as_of[d] < since <= t
               for since, readers in zip(s.since, s.readers) for d, t in enumerate(readers))


def index_published(s, cfg) -> bool:
    """the index is published"""
    return s.published is not None and any(s.published)


def peer_hold_moved(s, cfg) -> bool:
    """a peer hold has moved past its registration"""
    return s.ix_as_of is not None and any(standing != BOTTOM and standing > s.ix_as_of for standing in s.standing)


def peek_forgotten_while_queued(s, cfg) -> bool:
    """a reconnection forgets a peek still queued or rendered"""
    return s.epoch is not None and s.epoch >= 1 and any(
        status != LIVE and status != UNBORN and (readers[d] is not None or any(c[0] == "Create" and c[1] == d for c in iq))
        for d, status in enumerate(s.df) for readers, iq in zip(s.readers, s.iq))


def hello_queued(s, cfg) -> bool:
    """a Hello is queued"""
    return any(command[0] == "Hello" for iq in s.iq for command in iq)


def reconnected(s, cfg) -> bool:
    """the controller has reconnected"""
    return s.epoch is not None and s.epoch >= 1


REACHABLE = {
    "PeekCreated": peek_created,
    "PeekLive": peek_live,
    "PeekRendered": peek_rendered,
    "DroppedPeekRendered": peek_dropped_while_rendered,
    "CompactionSent": compaction_sent,
    "SinceAdvanced": since_advanced,
    "HoldAcquired": hold_acquired,
    "ReaderStranded": reader_stranded,
    "PeekCapped": peek_capped,
    "PeekParked": peek_parked,
    "ParkedWithData": some_parked_with_data,
    "PeekServed": peek_served,
    "WakeupPending": wakeup_pending,
    "RetirementReported": retirement_reported,
    "HoldFreedByReports": hold_freed_by_reports,
    "CutDeclared": cut_declared,
    "PhysicalAdvanced": physical_advanced,
    "WriterFloorAbsent": writer_floor_absent,
    "ReaderAdvanced": reader_advanced,
    "SincePastReaderAsOf": since_past_reader_as_of,
    "IndexPublished": index_published,
    "PeerHoldMoved": peer_hold_moved,
    "PeekForgottenWhileQueued": peek_forgotten_while_queued,
    "HelloQueued": hello_queued,
    "Reconnected": reconnected,
}


def doc(name: str) -> str:
    """How a reviewer reads predicate `name`: its docstring."""
    return REACHABLE[name].__doc__.strip()


def predicates_for(names, cfg) -> dict[str, Callable]:
    """The named predicates bound to `cfg`: state -> bool, in the order given."""
    return {name: partial(REACHABLE[name], cfg=cfg) for name in names}
