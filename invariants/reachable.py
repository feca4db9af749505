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

from protocol.state import LIVE, UNBORN, held, stranded_on


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
}


def doc(name: str) -> str:
    """How a reviewer reads predicate `name`: its docstring."""
    return REACHABLE[name].__doc__.strip()


def predicates_for(names, cfg) -> dict[str, Callable]:
    """The named predicates bound to `cfg`: state -> bool, in the order given."""
    return {name: partial(REACHABLE[name], cfg=cfg) for name in names}
