"""Liveness properties as leads-to (`P ~> Q`), checked under the configuration's fairness.

A liveness property is a named function from a configuration to the
leads-to pairs it is the conjunction of; a second property is one more
such definition. The checker (protocol/liveness.py) decides each pair on
the reachable graph.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import attrs


@attrs.frozen
class LeadsTo:
    """`premise ~> conclusion`: in every fair behaviour, whenever the premise holds,
    the conclusion holds then or at some later state."""

    premise: Callable[[object], bool]
    conclusion: Callable[[object], bool]
    text: str  # how a reviewer reads it, e.g. "sent >= 1 ~> since[0] >= 1"


def leads_to(premise: Callable, conclusion: Callable, text: str) -> LeadsTo:
    return LeadsTo(premise, conclusion, text)


def sent_at_least(s, t: int) -> bool:
    """The controller has allowed the index to compact up to `t`."""
    return s.sent >= t


def since_at_least(s, p: int, t: int) -> bool:
    """Process `p`'s publisher has realized compaction up to `t`."""
    return s.since[p] >= t


def compaction_not_stalled(cfg) -> list[LeadsTo]:
    """What the controller allowed, every process's publisher eventually realizes.

    For every process p and time t, `sent >= t ~> since[p] >= t`: a lagging
    interactive runtime may hold the publisher back, but only until the
    runtimes drain their queues (spec sections 5 and 6).
    """
    return [
        leads_to(
            partial(sent_at_least, t=t),
            partial(since_at_least, p=p, t=t),
            f"sent >= {t} ~> since[{p}] >= {t}",
        )
        for p in range(cfg.P)
        for t in range(1, cfg.MaxTime + 1)  # t = 0 is met everywhere: since[p] >= 0
    ]
