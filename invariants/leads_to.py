"""Liveness properties as leads-to (`P ~> Q`), checked under the configuration's fairness.

A liveness property is a named function from a configuration to the
leads-to pairs it is the conjunction of; a second property is one more
such definition. The checker (protocol/liveness.py) decides each pair on
the reachable graph.

Each pair also says which process it speaks of and what it reads, so that
symmetry reduction can permute the pairs with the processes
(`pair_permutation`) and an engine that stores states by component can
evaluate the predicates once per component rather than once per state.
"""

from __future__ import annotations

from functools import partial
from typing import Callable, Hashable, Sequence

import attrs

STATE, GLOBALS, PROCESS = "state", "globals", "process"  # what a predicate reads


@attrs.frozen
class LeadsTo:
    """`premise ~> conclusion`: in every fair behaviour, whenever the premise holds,
    the conclusion holds then or at some later state."""

    premise: Callable[[object], bool]
    conclusion: Callable[[object], bool]
    text: str  # how a reviewer reads it, e.g. "sent >= 1 ~> since[0] >= 1"
    # The process the pair speaks of (None: no process in particular), and what the
    # pair says apart from it: renaming the processes by f maps this pair to the one
    # with the same `form` about process f(process).
    process: int | None = None
    form: Hashable = None
    # What each predicate reads: the whole state, only the global variables, or only
    # the local variables of `process`.
    premise_reads: str = STATE
    conclusion_reads: str = STATE


def leads_to(premise: Callable, conclusion: Callable, text: str, **about) -> LeadsTo:
    return LeadsTo(premise, conclusion, text, **about)


def pair_permutation(pairs: Sequence[LeadsTo], process_map: Sequence[int]) -> tuple[int, ...]:
    """Where renaming process q to process_map[q] sends each pair: index -> index.

    Raises ValueError when the pairs are not closed under the renaming (a pair
    about a process with no counterpart), for then one pair's verdict cannot
    stand for its orbit's.
    """
    index = {(pair.process, pair.form): i for i, pair in enumerate(pairs)}
    if len(index) < len(pairs):
        raise ValueError("two leads-to pairs share a process and a form: give each its own form")
    mapped = []
    for pair in pairs:
        key = (None if pair.process is None else process_map[pair.process], pair.form)
        if key not in index:
            raise ValueError(f"{pair.text} has no counterpart when the processes are renamed")
        mapped.append(index[key])
    return tuple(mapped)


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
            process=p,
            form=("sent ~> since", t),
            premise_reads=GLOBALS,
            conclusion_reads=PROCESS,
        )
        for p in range(cfg.P)
        for t in range(1, cfg.MaxTime + 1)  # t = 0 is met everywhere: since[p] >= 0
    ]
