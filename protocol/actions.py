"""The actions of model-spec sections 4, 10.3 and 11.3: one pure function each, guard first.

Every action takes the state, the configuration and its arguments, and
returns the successor state, or None where its guard does not hold. No
action is a self-loop: an enabled action always changes the state.

A runtime step pops the head of its queue and applies it: each command
kind's effect on each runtime is one small function below
(`MAINTENANCE_EFFECTS`, `INTERACTIVE_EFFECTS`). At the end, `ACTIONS`
declares every action: its parameters, fairness and footprint; its words
and its Mermaid drawing are registered under its name in narrate.py and
export.py.
"""

from __future__ import annotations

from typing import Callable

import attrs

from . import commands as cmd
from .commands import ACQUIRE, COMPACT, CREATE, DROP, EXPORT, RELEASE
from .engine import CONTROLLER, LOCAL, WHOLE, WIDE, Footprint
from .state import (
    BOTTOM, DROPPED, LIVE, UNBORN, State, index_count, append_all, ctl_since, frontier_at, held, ids,
    index_of_peek, notify, replace_at, servable, stranded_on, with_frontier,
)

# ---------------------------------------------------------------- controller


def create_peek(s: State, cfg, d: int, t: int, i: int = 0) -> State | None:
    """CreatePeek(d, i, t): the controller creates peek d reading index i at as_of t."""
    if s.df[d] != UNBORN or UNBORN in s.df[:d]:
        return None  # ids are allocated in order: d must be the lowest unborn
    if not ctl_since(s, i) <= t <= cfg.MaxTime:
        return None
    indexed = s.ix is not None
    mq, iq, caps = s.mq, append_all(s.iq, cmd.create(d, i, t, indexed)), s.caps
    if cfg.acquire != "none":
        mq = append_all(mq, (ACQUIRE, d, t))  # a hold on the shared point, whichever id
    if cfg.cap:
        caps = caps | {d}
    ix = replace_at(s.ix, d, i) if indexed else s.ix
    return s._replace(
        df=replace_at(s.df, d, LIVE), as_of=replace_at(s.as_of, d, t), ix=ix, mq=mq, iq=iq, caps=caps
    )


def drop_peek(s: State, cfg, d: int) -> State | None:
    """DropPeek(d): the peek is done or cancelled; its hold on the index goes."""
    if s.df[d] != LIVE:
        return None
    iq, mq = append_all(s.iq, (DROP, d)), s.mq
    if cfg.acquire == "release_on_interactive":
        iq = append_all(iq, (RELEASE, d))
    elif cfg.acquire == "release_on_maintenance":
        mq = append_all(mq, (RELEASE, d))
    return compact(s._replace(df=replace_at(s.df, d, DROPPED), iq=iq, mq=mq), cfg, index_of_peek(s, d))


def advance_policy(s: State, cfg, i: int = 0) -> State | None:
    """AdvancePolicy(i): the controller's own compaction policy for index i moves one time on."""
    if frontier_at(s.policy, i) >= cfg.MaxTime:
        return None
    return compact(s._replace(policy=with_frontier(s.policy, i, frontier_at(s.policy, i) + 1)), cfg, i)


def ingest(s: State, cfg) -> State | None:
    """Ingest: new data advances the index's write frontier. With `seal = tap`, a tap
    upstream of the publisher's sink notifies every process now, before the sink has
    published the new upper (the lost wakeup)."""
    if s.upper >= cfg.MaxTime:
        return None
    s = s._replace(upper=s.upper + 1)
    if cfg.seal == "tap":
        for p in range(cfg.P):
            s = notify(s, p, ids(s, cfg, p))
    return s


def reconnect(s: State, cfg) -> State | None:
    """Reconnect: the controller reconnects (Hello); the multiplexer's per-connection
    state, the cap, is discarded while the queues keep the old connection's commands."""
    if not s.caps:
        return None
    return forward(s._replace(caps=frozenset()), cfg)


def compact(s: State, cfg, i: int = 0) -> State:
    """Compact(i) (part of a step): issue AllowCompaction(i) if i's read frontier rose."""
    frontier = ctl_since(s, i)
    if frontier <= frontier_at(s.sent, i):
        return s
    s = s._replace(sent=with_frontier(s.sent, i, frontier))
    if cfg.cap:
        return forward(s, cfg)
    command = cmd.compact(i, frontier, s.ix is not None)
    if cfg.compaction == "routed":
        return s._replace(mq=append_all(s.mq, command))
    return s._replace(mq=append_all(s.mq, command), iq=append_all(s.iq, command))


def forward(s: State, cfg) -> State:
    """Forward (cap only): the multiplexer forwards compaction capped at uncapped peeks."""
    capped = min([s.sent] + [s.as_of[d] for d in s.caps])
    if capped <= s.fwd:
        return s
    return s._replace(fwd=capped, mq=append_all(s.mq, (COMPACT, capped)))


# ------------------------------------------------------------------ runtimes


def maint_step(s: State, cfg, p: int) -> State | None:
    """MaintStep(p): process p's maintenance runtime applies its next command."""
    if not s.mq[p]:
        return None
    command = s.mq[p][0]
    popped = s._replace(mq=replace_at(s.mq, p, s.mq[p][1:]))
    return MAINTENANCE_EFFECTS[command[0]](popped, cfg, p, command)


def inter_step(s: State, cfg, p: int) -> State | None:
    """InterStep(p): process p's interactive runtime applies its next command."""
    if not s.iq[p]:
        return None
    command = s.iq[p][0]
    popped = s._replace(iq=replace_at(s.iq, p, s.iq[p][1:]))
    return INTERACTIVE_EFFECTS[command[0]](popped, cfg, p, command)


def reclaim(s: State, cfg, p: int) -> State | None:
    """Reclaim(p): maintenance drops the acquired holds whose release it has seen."""
    acquired = held(s.acq[p])
    both = {d for d in s.released[p] if d in acquired}
    if not both:
        return None
    acq_p = tuple(None if d in both else t for d, t in enumerate(s.acq[p]))
    return s._replace(
        acq=replace_at(s.acq, p, acq_p),
        released=replace_at(s.released, p, s.released[p] - both),
    )


def publish_bound(s: State, cfg, p: int) -> int | None:
    """The least hold on process p's publication point: the writer (every id's entry but
    ⊥), the standing hold if any, every reader not stranded (unless readers do not bound
    it, `reader_bound = false`), every acquired hold; None where nothing is left."""
    holds = [t for t in entries(s.writer[p]) if t != BOTTOM]
    if cfg.standing_hold:
        holds += entries(s.standing[p])
    if cfg.reader_bound:
        stranded = stranded_on(s, p)
        holds += [t for d, t in held(s.readers[p]).items() if d not in stranded]
    holds += held(s.acq[p]).values()
    return min(holds) if holds else None


def publish(s: State, cfg, p: int) -> State | None:
    """Publish(p): process p's publisher raises since and physical compaction to its bound
    (physical compaction to the least reader's cut, or the coverage, with `from_cuts`)."""
    bound = publish_bound(s, cfg, p)
    since = s.since[p] if bound is None else max(s.since[p], bound)
    if cfg.physical == "from_since":
        physical = max(s.physical[p], min(since, s.upper))
    elif cfg.physical == "from_upper":
        physical = max(s.physical[p], s.upper)
    else:
        cuts = held(s.cut[p]).values()
        physical = max(s.physical[p], min(cuts) if cuts else s.pub[p])
    if (since, physical) == (s.since[p], s.physical[p]):
        return None
    return s._replace(
        since=replace_at(s.since, p, since), physical=replace_at(s.physical, p, physical)
    )


def seal(s: State, cfg, p: int) -> State | None:
    """Seal(p): process p's publisher sink publishes the write frontier as the chain's
    upper; with `seal = sink` it then notifies the ids the seal names."""
    if s.pub[p] >= s.upper:
        return None
    s = s._replace(pub=replace_at(s.pub, p, s.upper))
    return notify(s, p, ids(s, cfg, p)) if cfg.seal == "sink" else s


def wake(s: State, cfg, p: int) -> State | None:
    """Wake(p): process p's peek server re-examines the parked peeks of every notified id
    and serves those it now can; the notifications are consumed."""
    if not s.dirty[p]:
        return None
    served = {d for d in s.parked[p] if index_of_peek(s, d) in s.dirty[p] and servable(s, p, d)}
    return s._replace(parked=replace_at(s.parked, p, s.parked[p] - served),
                      dirty=replace_at(s.dirty, p, frozenset()))


def entries(frontier) -> tuple:
    return (frontier,) if isinstance(frontier, int) else frontier


# ---------------------------------------------------- maintenance, per command


def maint_compact(s: State, cfg, p: int, command) -> State:
    """Compact(i, f): the write handle allows compaction to f (the id's own entry with
    per_id; with shared, the one frontier, whichever id wrote last)."""
    i, f = cmd.index_of(command), command[-1]
    return s._replace(writer=replace_at(s.writer, p, with_frontier(s.writer[p], i, f)))


def maint_acquire(s: State, cfg, p: int, command) -> State:
    """Acquire(d, t): install a hold at t, unless the release overtook it and consumes it."""
    _, d, t = command
    if d in s.released[p]:
        return s._replace(released=replace_at(s.released, p, s.released[p] - {d}))
    return s._replace(acq=replace_at(s.acq, p, replace_at(s.acq[p], d, t)))


def maint_release(s: State, cfg, p: int, command) -> State:
    """Release(d): drop d's acquired hold, or record the release for the Acquire to come."""
    d = command[1]
    if s.acq[p][d] is not None:
        return s._replace(acq=replace_at(s.acq, p, replace_at(s.acq[p], d, None)))
    return s._replace(released=replace_at(s.released, p, s.released[p] | {d}))


def maint_export(s: State, cfg, p: int, command) -> State:
    """Export: Y is published here. With `overwrite` the registry slot is replaced, and
    every reader of Y registered in the placeholder is stranded; with `adopt` the
    placeholder is backed in place (nothing beyond the pop)."""
    if cfg.reexport == "overwrite":
        placeholder = {d for d in held(s.readers[p]) if index_of_peek(s, d) == 1}
        s = s._replace(stranded=replace_at(s.stranded, p, s.stranded[p] | placeholder))
    return notify(s, p, (1,)) if cfg.seal != "none" else s  # Y's publication notifies Y


MAINTENANCE_EFFECTS = {
    COMPACT: maint_compact,
    ACQUIRE: maint_acquire,
    RELEASE: maint_release,
    EXPORT: maint_export,
}

# ---------------------------------------------------- interactive, per command


def inter_create(s: State, cfg, p: int, command) -> State:
    """Create(d, i, t): render peek d; its import registers a read hold at t (into a
    placeholder if it reads Y before Y is published here). Under the cap, process 0's
    frontier report retires the cap on d. With a seal the peek parks unless it can be
    served at once; with physical cuts its reader declares a cut."""
    d, t = command[1], command[-1]
    s = s._replace(readers=replace_at(s.readers, p, replace_at(s.readers[p], d, t)))
    if cfg.cap and p == 0:
        s = forward(s._replace(caps=s.caps - {d}), cfg)
    if cfg.seal != "none" and not servable(s, p, d):
        s = s._replace(parked=replace_at(s.parked, p, s.parked[p] | {d}))
    if cfg.physical == "from_cuts":
        at = s.pub[p] if cfg.cut_floor == "coverage" else s.upper
        s = s._replace(cut=replace_at(s.cut, p, replace_at(s.cut[p], d, at)))
    return s


def inter_drop(s: State, cfg, p: int, command) -> State:
    """Drop(d): peek d's reader registration goes (stranded or not), and so do its parking
    and its cut. With retirement reports, p reports d retired (unless the multiplexer
    filters it, or a parked peek is cancelled silently); the last report lets the
    controller free the hold, and Compact runs in the same step."""
    d = command[1]
    was_parked = cfg.seal != "none" and d in s.parked[p]
    s = s._replace(readers=replace_at(s.readers, p, replace_at(s.readers[p], d, None)))
    if d in stranded_on(s, p):
        s = s._replace(stranded=replace_at(s.stranded, p, s.stranded[p] - {d}))
    if cfg.seal != "none":
        parked = s.parked[p] - {d}
        still_read = {index_of_peek(s, e) for e in parked}
        s = s._replace(parked=replace_at(s.parked, p, parked),
                       dirty=replace_at(s.dirty, p, s.dirty[p] & still_read))
    if cfg.physical == "from_cuts":
        s = s._replace(cut=replace_at(s.cut, p, replace_at(s.cut[p], d, None)))
    if cfg.ctl_release == "report" and reports(cfg, was_parked):
        s = s._replace(reported=replace_at(s.reported, p, s.reported[p] | {d}),
                       reports=replace_at(s.reports, d, s.reports[d] + 1))
        if s.reports[d] == cfg.P:
            s = compact(s, cfg, index_of_peek(s, d))
    return s


def reports(cfg, was_parked: bool) -> bool:
    """Whether the retirement report of an applied Drop reaches the controller."""
    if cfg.report == "owner_filter":
        return False  # the drop evicted the owner already: the multiplexer filters the report
    return not (cfg.report == "silent_cancel" and was_parked)


def inter_compact(s: State, cfg, p: int, command) -> State:
    """Compact(i, f): with a standing hold, record it (per id with per_id; otherwise the
    one hold rises to the highest frontier applied for either id); else only the pop."""
    if not cfg.standing_hold:
        return s
    i, f = cmd.index_of(command), command[-1]
    old = s.standing[p]
    new = replace_at(old, i, f) if isinstance(old, tuple) else max(old, f)
    return s._replace(standing=replace_at(s.standing, p, new))


def inter_release(s: State, cfg, p: int, command) -> State:
    """Release(d): record the release for maintenance to act on."""
    return s._replace(released=replace_at(s.released, p, s.released[p] | {command[1]}))


INTERACTIVE_EFFECTS = {
    CREATE: inter_create,
    DROP: inter_drop,
    COMPACT: inter_compact,
    RELEASE: inter_release,
}


# ------------------------------------------------------------ declarations


def always(cfg) -> bool:
    return True


@attrs.frozen
class Action:
    """One action of the spec. `parameters(cfg)` lists its instances' arguments in
    enumeration order, each as (the label's arguments, the step function's keyword
    arguments); `footprint(cfg, p)` says what an instance on process p (None for a
    controller action) reads and writes; `words` and `drawing`, registered by name in
    narrate.py and export.py, narrate a step of it and draw it in a Mermaid sequence
    diagram (tests/test_declarations.py fails, naming the action, where one is missing)."""

    name: str
    step: Callable  # (state, cfg, **arguments) -> next state or None
    parameters: Callable  # cfg -> [(label arguments, keyword arguments)]
    fair: bool  # a runtime action: weakly fair, per instance, when the configuration asks
    footprint: Callable  # (cfg, p) -> Footprint
    exists: Callable = always  # cfg -> whether the configuration has the action at all

    @property
    def words(self) -> Callable | None:
        """(label, before, after) -> the step in protocol words (narrate.py)."""
        from .narrate import WORDS

        return WORDS.get(self.name)

    @property
    def drawing(self) -> Callable | None:
        """(name, args, head, before, after) -> the step's Mermaid lines (export.py)."""
        from .export import DRAWINGS

        return DRAWINGS.get(self.name)


# ------------------------------------------------------------ parameters


def peek_times(cfg):
    """CreatePeek(d, i, t), ordered by d, then i, then t; `CreatePeek(d, t)` with one index."""
    indexed = index_count(cfg) > 1
    return [((d, i, t) if indexed else (d, t), dict(d=d, t=t, i=i))
            for d in range(cfg.D) for i in range(index_count(cfg)) for t in range(cfg.MaxTime + 1)]


def peeks(cfg):
    return [((d,), dict(d=d)) for d in range(cfg.D)]


def index_ids(cfg):
    """AdvancePolicy(i) for each id in increasing order; `AdvancePolicy` with one index."""
    if index_count(cfg) == 1:
        return [((), {})]
    return [((i,), dict(i=i)) for i in range(index_count(cfg))]


def nothing(cfg):
    return [((), {})]


def processes(cfg):
    return [((p,), dict(p=p)) for p in range(cfg.P)]


# ------------------------------------------------------------ footprints


def controller(cfg, p) -> Footprint:
    return Footprint(CONTROLLER)


def local(cfg, p) -> Footprint:
    return Footprint(LOCAL)


def maint_step_footprint(cfg, p) -> Footprint:
    """With `overwrite`, applying Export reads which index each reader's peek is on (ix);
    so does its notification with a seal (which parked peeks read Y)."""
    reads_ix = cfg.reexport == "overwrite" or (cfg.seal != "none" and cfg.alias != "none")
    return Footprint(LOCAL, ("ix",)) if reads_ix else Footprint(LOCAL)


def inter_step_footprint(cfg, p) -> Footprint:
    """Process 0's frontier report retires the cap and may forward compaction; a
    retirement report may let the controller free a hold and send AllowCompaction. With a
    seal a render reads the peek's as_of (and index), a cut at upper reads upper."""
    if (cfg.cap and p == 0) or cfg.ctl_release == "report":
        return Footprint(WIDE)
    reads = []
    if cfg.seal != "none":
        reads += ["as_of"] + (["ix"] if cfg.alias != "none" else [])
    if cfg.physical == "from_cuts" and cfg.cut_floor == "upper":
        reads.append("upper")
    return Footprint(LOCAL, tuple(reads))


def publish_footprint(cfg, p) -> Footprint:
    return Footprint(LOCAL, ("upper",))  # physical compaction is bounded by upper


def seal_footprint(cfg, p) -> Footprint:
    """Sealing reads upper, and its notification which index each parked peek reads."""
    return Footprint(LOCAL, ("upper", "ix") if cfg.alias != "none" else ("upper",))


def wake_footprint(cfg, p) -> Footprint:
    """Waking reads each parked peek's as_of (and index)."""
    return Footprint(LOCAL, ("as_of", "ix") if cfg.alias != "none" else ("as_of",))


def ingest_footprint(cfg, p) -> Footprint:
    """With a tap, Ingest notifies every process of what it has parked: the whole state."""
    return Footprint(WHOLE) if cfg.seal == "tap" else Footprint(CONTROLLER)


def with_seal(cfg) -> bool:
    return cfg.seal != "none"


# ------------------------------------------------------------ the actions

ACTIONS = (
    Action("CreatePeek", create_peek, peek_times, False, controller),
    Action("DropPeek", drop_peek, peeks, False, controller),
    Action("AdvancePolicy", advance_policy, index_ids, False, controller),
    Action("Ingest", ingest, nothing, False, ingest_footprint),
    Action("Reconnect", reconnect, nothing, False, controller, exists=lambda cfg: cfg.reconnect),
    Action("MaintStep", maint_step, processes, True, maint_step_footprint),
    Action("InterStep", inter_step, processes, True, inter_step_footprint),
    # Without acquisition nothing is ever released to reclaim.
    Action("Reclaim", reclaim, processes, True, local, exists=lambda cfg: cfg.acquire != "none"),
    Action("Publish", publish, processes, True, publish_footprint),
    Action("Seal", seal, processes, True, seal_footprint, exists=with_seal),
    Action("Wake", wake, processes, True, wake_footprint, exists=with_seal),
)
BY_NAME = {action.name: action for action in ACTIONS}
# The runtime actions, weakly fair per process when the configuration asks for fairness.
RUNTIME_ACTIONS = tuple(action.name for action in ACTIONS if action.fair)
