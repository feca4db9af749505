"""The actions of model-spec sections 4 and 10.3: one pure function each, guard first.

Every action takes the state, the configuration and its arguments, and
returns the successor state, or None where its guard does not hold. No
action is a self-loop: an enabled action always changes the state.

A runtime step pops the head of its queue and applies it: each command
kind's effect on each runtime is one small function below
(`MAINTENANCE_EFFECTS`, `INTERACTIVE_EFFECTS`). At the end, `ACTIONS`
declares every action: its parameters, fairness and footprint.

What a step did is said by the events it records (protocol/events.py):
every action and effect takes an optional `record` list and, when given
one, appends an event per thing that happened. Each event kind is declared
just above the effect that records it, with its words and its drawing, so
a mechanism that changes what a step does changes its effect and its
events here, and narration and drawing follow. The search passes no
recorder and pays nothing for them.
"""

from __future__ import annotations

from typing import Callable

import attrs

from . import commands as cmd
from .commands import ACQUIRE, COMPACT, CREATE, DROP, EXPORT, INTERACTIVE, MAINTENANCE, RELEASE, command_text
from .engine import CONTROLLER, LOCAL, WIDE, Footprint
from .events import (
    CONTROLLER_LANE, MULTIPLEXER_LANE, Call, Event, Send, StepNote, event, forwards, handed, index_name, lane, listed,
    peeks_phrase, processes_phrase, sent_everywhere, value_text,
)
from .state import (
    DROPPED, INDEX_NAMES, LIVE, UNBORN, State, index_count, append_all, ctl_since, exported, frontier_at, held,
    index_of_peek, replace_at, stranded_on, with_frontier,
)

# ---------------------------------------------------------------- controller


@event
class PeekCreated(Event):
    """The controller creates peek d on index i at as_of t (CreateDataflow)."""

    d: int
    i: int
    t: int
    indexed: bool

    def words(self) -> str:
        reading = f" {INDEX_NAMES[self.i]}" if self.indexed else ""
        return f"the controller creates peek {self.d} reading{reading} at as_of {self.t}"

    def drawing(self) -> tuple:
        reads = f", index {INDEX_NAMES[self.i]}" if self.indexed else ""
        return (Call(CONTROLLER_LANE, MULTIPLEXER_LANE, f"CreateDataflow(peek {self.d}{reads}, as_of {self.t})"),)

    def joined(self, clauses: list[str]) -> str:
        return ": " + "; ".join(clauses) if clauses else ""


@event
class Queued(Event):
    """The multiplexer queues a command on the runtime's stream of the given processes."""

    runtime: str
    command: tuple
    processes: tuple
    P: int

    def words(self) -> str:
        where = processes_phrase(self.processes, self.P)
        return f"{command_text(self.command)} is queued on {where} {self.runtime} stream"

    def drawing(self) -> tuple:
        return (Send(self.runtime, command_text(self.command), self.processes),)


def queued(record: list, runtime: str, P: int, *commands) -> None:
    """Record that `commands` were appended to every process's `runtime` stream."""
    record.extend(Queued(runtime, command, tuple(range(P)), P) for command in commands)


@event
class CapRaised(Event):
    """Under the cap, a new peek caps the compaction the multiplexer forwards."""

    d: int
    t: int

    def words(self) -> str:
        return f"the multiplexer caps compaction at {self.t} until process 0 renders peek {self.d}"

    def drawing(self) -> tuple:
        return ()


def create_peek(s: State, cfg, d: int, t: int, i: int = 0, record: list | None = None) -> State | None:
    """CreatePeek(d, i, t): the controller creates peek d reading index i at as_of t."""
    if s.df[d] != UNBORN or UNBORN in s.df[:d]:
        return None  # ids are allocated in order: d must be the lowest unborn
    if not ctl_since(s, i) <= t <= cfg.MaxTime:
        return None
    indexed = s.ix is not None
    create = cmd.create(d, i, t, indexed)
    mq, iq, caps = s.mq, append_all(s.iq, create), s.caps
    if cfg.acquire != "none":
        mq = append_all(mq, (ACQUIRE, d, t))  # a hold on the shared point, whichever id
    if cfg.cap:
        caps = caps | {d}
    if record is not None:
        record.append(PeekCreated(d, i, t, indexed))
        queued(record, INTERACTIVE, cfg.P, create)
        if cfg.acquire != "none":
            queued(record, MAINTENANCE, cfg.P, (ACQUIRE, d, t))
        if cfg.cap:
            record.append(CapRaised(d, t))
    ix = replace_at(s.ix, d, i) if indexed else s.ix
    return s._replace(
        df=replace_at(s.df, d, LIVE), as_of=replace_at(s.as_of, d, t), ix=ix, mq=mq, iq=iq, caps=caps
    )


@event
class PeekDropped(Event):
    """The controller drops peek d: its read hold at as_of goes."""

    d: int
    as_of: int

    def words(self) -> str:
        return f"the controller drops peek {self.d}: its read hold at {self.as_of} goes"

    def drawing(self) -> tuple:
        return (Call(CONTROLLER_LANE, MULTIPLEXER_LANE, f"Drop(peek {self.d})"),)

    def joined(self, clauses: list[str]) -> str:
        return listed(clauses)


def drop_peek(s: State, cfg, d: int, record: list | None = None) -> State | None:
    """DropPeek(d): the peek is done or cancelled; its hold on the index goes."""
    if s.df[d] != LIVE:
        return None
    iq, mq = append_all(s.iq, (DROP, d)), s.mq
    released_on = None
    if cfg.acquire == "release_on_interactive":
        iq, released_on = append_all(iq, (RELEASE, d)), INTERACTIVE
    elif cfg.acquire == "release_on_maintenance":
        mq, released_on = append_all(mq, (RELEASE, d)), MAINTENANCE
    if record is not None:
        record.append(PeekDropped(d, s.as_of[d]))
        queued(record, INTERACTIVE, cfg.P, (DROP, d))
        if released_on is not None:
            queued(record, released_on, cfg.P, (RELEASE, d))
    return compact(s._replace(df=replace_at(s.df, d, DROPPED), iq=iq, mq=mq), cfg, index_of_peek(s, d), record)


@event
class PolicyAdvanced(Event):
    """The controller's compaction policy for index i moves on to `policy`."""

    i: int
    policy: int
    indexed: bool

    def words(self) -> str:
        whose = f" for {INDEX_NAMES[self.i]}" if self.indexed else ""
        return f"the controller's compaction policy{whose} advances to {self.policy}"

    def drawing(self) -> tuple:
        return ()

    def joined(self, clauses: list[str]) -> str:
        return listed(clauses)


def advance_policy(s: State, cfg, i: int = 0, record: list | None = None) -> State | None:
    """AdvancePolicy(i): the controller's own compaction policy for index i moves one time on."""
    if frontier_at(s.policy, i) >= cfg.MaxTime:
        return None
    policy = frontier_at(s.policy, i) + 1
    if record is not None:
        record.append(PolicyAdvanced(i, policy, s.ix is not None))
    return compact(s._replace(policy=with_frontier(s.policy, i, policy)), cfg, i, record)


@event
class UpperAdvanced(Event):
    """New data: the index's write frontier moves from `old` to `new`."""

    old: int
    new: int

    def words(self) -> str:
        return f"new data arrives: the index's write frontier (upper) advances to {self.new}"

    def drawing(self) -> tuple:
        return (StepNote(CONTROLLER_LANE, f": upper {self.old} to {self.new}"),)


def ingest(s: State, cfg, record: list | None = None) -> State | None:
    """Ingest: new data advances the index's write frontier."""
    if s.upper >= cfg.MaxTime:
        return None
    if record is not None:
        record.append(UpperAdvanced(s.upper, s.upper + 1))
    return s._replace(upper=s.upper + 1)


@event
class Reconnected(Event):
    """The controller reconnects: the cap goes, and the multiplexer may forward compaction."""

    forwarded: int | None
    P: int

    def words(self) -> str:
        words = ("the controller reconnects (Hello): the reconnection discards the cap, the multiplexer's "
                 "per-connection state, while the runtimes' queues keep the old connection's commands")
        return words + f"; {forwards(self.forwarded)}" if self.forwarded is not None else words

    def drawing(self) -> tuple:
        hello = Call(CONTROLLER_LANE, MULTIPLEXER_LANE, "Hello (reconnect: the cap is discarded)")
        if self.forwarded is None:
            return (hello,)
        return (hello, sent_everywhere(MAINTENANCE, (COMPACT, self.forwarded), self.P))


def reconnect(s: State, cfg, record: list | None = None) -> State | None:
    """Reconnect: the controller reconnects (Hello); the multiplexer's per-connection
    state, the cap, is discarded while the queues keep the old connection's commands."""
    if not s.caps:
        return None
    after = forward(s._replace(caps=frozenset()), cfg)
    if record is not None:
        record.append(Reconnected(forwarded(s, after), cfg.P))
    return after


@event
class CompactionHeld(Event):
    """The controller's read frontier for index i did not rise: no AllowCompaction.
    `holder` is a live peek whose as_of holds it below the policy, if one does."""

    frontier: int
    holder: int | None

    def words(self) -> str:
        held_by = f", held by peek {self.holder}" if self.holder is not None else ""
        return f"the controller's read frontier stays at {self.frontier}{held_by}, so no AllowCompaction is sent"

    def drawing(self) -> tuple:
        return ()


@event
class CompactionSent(Event):
    """AllowCompaction(i, frontier) is sent: the multiplexer queues the command on every
    process's streams of the given runtimes (maintenance only, when routed)."""

    i: int
    frontier: int
    indexed: bool
    command: tuple
    runtimes: tuple
    P: int

    def words(self) -> str:
        to = " and ".join(f"{runtime} runtime" for runtime in self.runtimes)
        return f"AllowCompaction({index_name(self.i, self.indexed)}, {self.frontier}) is sent to every process's {to}"

    def drawing(self) -> tuple:
        allow = Call(CONTROLLER_LANE, MULTIPLEXER_LANE, f"AllowCompaction({index_name(self.i, self.indexed)}, {self.frontier})")
        return (allow, *(sent_everywhere(runtime, self.command, self.P) for runtime in self.runtimes))


@event
class CompactionForwarded(Event):
    """Under the cap, AllowCompaction(frontier) is sent and the multiplexer forwards
    Compact(forwarded), capped below the frontier at a peek process 0 has not rendered."""

    frontier: int
    forwarded: int
    P: int

    def words(self) -> str:
        words = f"AllowCompaction(index, {self.frontier}) is sent, and {forwards(self.forwarded)}"
        if self.forwarded < self.frontier:
            words += f" (capped at the as_of {self.forwarded} of a peek process 0 has not rendered)"
        return words

    def drawing(self) -> tuple:
        return (Call(CONTROLLER_LANE, MULTIPLEXER_LANE, f"AllowCompaction(index, {self.frontier})"),
                sent_everywhere(MAINTENANCE, (COMPACT, self.forwarded), self.P))


@event
class CompactionCapped(Event):
    """Under the cap, AllowCompaction(frontier) is sent and the cap holds all of it back."""

    frontier: int

    def words(self) -> str:
        return (f"AllowCompaction(index, {self.frontier}) is sent, but the multiplexer's cap holds it back "
                "(a peek is not yet rendered on process 0)")

    def drawing(self) -> tuple:
        return (Call(CONTROLLER_LANE, MULTIPLEXER_LANE, f"AllowCompaction(index, {self.frontier})"),)


def frontier_holder(s: State, i: int, frontier: int) -> int | None:
    """The first live peek on i whose as_of holds i's read frontier below its policy."""
    if frontier >= frontier_at(s.policy, i):
        return None
    return next((d for d, status in enumerate(s.df)
                 if status == LIVE and s.as_of[d] == frontier and index_of_peek(s, d) == i), None)


def compact(s: State, cfg, i: int = 0, record: list | None = None) -> State:
    """Compact(i) (part of a step): issue AllowCompaction(i) if i's read frontier rose."""
    frontier = ctl_since(s, i)
    if frontier <= frontier_at(s.sent, i):
        if record is not None:
            record.append(CompactionHeld(frontier, frontier_holder(s, i, frontier)))
        return s
    s = s._replace(sent=with_frontier(s.sent, i, frontier))
    if cfg.cap:
        after = forward(s, cfg)
        if record is not None:
            moved = forwarded(s, after)
            record.append(CompactionCapped(frontier) if moved is None
                          else CompactionForwarded(frontier, moved, cfg.P))
        return after
    command = cmd.compact(i, frontier, s.ix is not None)
    if cfg.compaction == "routed":
        runtimes, after = (MAINTENANCE,), s._replace(mq=append_all(s.mq, command))
    else:
        runtimes = (MAINTENANCE, INTERACTIVE)
        after = s._replace(mq=append_all(s.mq, command), iq=append_all(s.iq, command))
    if record is not None:
        record.append(CompactionSent(i, frontier, s.ix is not None, command, runtimes, cfg.P))
    return after


def forward(s: State, cfg) -> State:
    """Forward (cap only): the multiplexer forwards compaction capped at uncapped peeks."""
    capped = min([s.sent] + [s.as_of[d] for d in s.caps])
    if capped <= s.fwd:
        return s
    return s._replace(fwd=capped, mq=append_all(s.mq, (COMPACT, capped)))


def forwarded(before: State, after: State) -> int | None:
    """The compaction Forward sent between two states, if it sent one."""
    return after.fwd if after.fwd > before.fwd else None


# ------------------------------------------------------------------ runtimes


@event
class Applied(Event):
    """Process p's runtime pops `command` and applies it; the effect's events say how."""

    runtime: str
    p: int
    command: tuple

    def words(self) -> str:
        return f"process {self.p}'s {self.runtime} runtime"

    def drawing(self) -> tuple:
        return (StepNote(lane(self.runtime, self.p), f": applies {command_text(self.command)}"),)

    def joined(self, clauses: list[str]) -> str:
        if not clauses:  # an effect that records nothing of its own
            return f" applies {command_text(self.command)}"
        return " " + clauses[0] + "".join("; " + clause for clause in clauses[1:])


def maint_step(s: State, cfg, p: int, record: list | None = None) -> State | None:
    """MaintStep(p): process p's maintenance runtime applies its next command."""
    if not s.mq[p]:
        return None
    command = s.mq[p][0]
    popped = s._replace(mq=replace_at(s.mq, p, s.mq[p][1:]))
    if record is not None:
        record.append(Applied(MAINTENANCE, p, command))
    return MAINTENANCE_EFFECTS[command[0]](popped, cfg, p, command, record)


def inter_step(s: State, cfg, p: int, record: list | None = None) -> State | None:
    """InterStep(p): process p's interactive runtime applies its next command."""
    if not s.iq[p]:
        return None
    command = s.iq[p][0]
    popped = s._replace(iq=replace_at(s.iq, p, s.iq[p][1:]))
    if record is not None:
        record.append(Applied(INTERACTIVE, p, command))
    return INTERACTIVE_EFFECTS[command[0]](popped, cfg, p, command, record)


@event
class HoldsReclaimed(Event):
    """Process p's maintenance drops the acquired holds of `peeks`, whose release it has seen."""

    p: int
    peeks: tuple

    def words(self) -> str:
        peeks = ", ".join(map(str, self.peeks))
        return (f"process {self.p}'s maintenance runtime reclaims the acquired hold of peek {peeks}, "
                "whose release it has seen")

    def drawing(self) -> tuple:
        return (StepNote(lane(MAINTENANCE, self.p)),)


def reclaim(s: State, cfg, p: int, record: list | None = None) -> State | None:
    """Reclaim(p): maintenance drops the acquired holds whose release it has seen."""
    acquired = held(s.acq[p])
    both = {d for d in s.released[p] if d in acquired}
    if not both:
        return None
    if record is not None:
        record.append(HoldsReclaimed(p, tuple(sorted(both))))
    acq_p = tuple(None if d in both else t for d, t in enumerate(s.acq[p]))
    return s._replace(
        acq=replace_at(s.acq, p, acq_p),
        released=replace_at(s.released, p, s.released[p] - both),
    )


def publish_holds(s: State, cfg, p: int) -> list[tuple]:
    """Every hold on process p's publication point, as (kind, whose, time): the writer
    (every id's), the standing hold if any, every reader not stranded, every acquired hold."""
    holds = frontier_holds("writer", s.writer[p])
    if cfg.standing_hold:
        holds += frontier_holds("standing", s.standing[p])
    stranded = stranded_on(s, p)
    holds += [("reader", d, t) for d, t in enumerate(s.readers[p]) if t is not None and d not in stranded]
    holds += [("acquired", d, t) for d, t in enumerate(s.acq[p]) if t is not None]
    return holds


def frontier_holds(kind: str, frontier) -> list[tuple]:
    """A writer or standing hold: one (kind, None, t), or one per index id (kind, i, t)."""
    if isinstance(frontier, int):
        return [(kind, None, frontier)]
    return [(kind, i, t) for i, t in enumerate(frontier)]


def publish_bound(s: State, cfg, p: int) -> int:
    """The least hold on process p's publication point."""
    return min(t for _, _, t in publish_holds(s, cfg, p))


@event
class Published(Event):
    """Process p's publisher raises since (to the least of `holds`) and physical compaction
    (bounded by upper); each pair is (before, after)."""

    p: int
    since: tuple
    physical: tuple
    upper: int
    holds: tuple

    def words(self) -> str:
        said = []
        if self.since[1] != self.since[0]:
            holds = ", ".join(hold_words(*hold) for hold in self.holds)
            said.append(f"raises the published since from {self.since[0]} to {self.since[1]} "
                        f"(the least of its holds: {holds})")
        if self.physical[1] != self.physical[0]:
            said.append(f"forwards physical compaction to {self.physical[1]} (upper is {self.upper})")
        return f"process {self.p}'s publisher " + ", and ".join(said)

    def drawing(self) -> tuple:
        return (StepNote(lane("pub", self.p), f": since {self.since[1]}, physical {self.physical[1]}"),)


def hold_words(kind: str, whose, t: int) -> str:
    """One of `publish_holds`, named: `writer 1`, `standing Y 0`, `peek 0's reader 1`."""
    if kind == "reader":
        return f"peek {whose}'s reader {t}"
    if kind == "acquired":
        return f"peek {whose}'s acquired hold {t}"
    return f"{kind} {t}" if whose is None else f"{kind} {INDEX_NAMES[whose]} {t}"


def publish(s: State, cfg, p: int, record: list | None = None) -> State | None:
    """Publish(p): process p's publisher raises since and physical compaction to its bound."""
    since = max(s.since[p], publish_bound(s, cfg, p))
    if cfg.physical == "from_since":
        physical = max(s.physical[p], min(since, s.upper))
    else:
        physical = max(s.physical[p], s.upper)
    if (since, physical) == (s.since[p], s.physical[p]):
        return None
    if record is not None:
        record.append(Published(p, (s.since[p], since), (s.physical[p], physical), s.upper,
                                tuple(publish_holds(s, cfg, p))))
    return s._replace(
        since=replace_at(s.since, p, since), physical=replace_at(s.physical, p, physical)
    )


# ---------------------------------------------------- maintenance, per command


@event
class WriterAllowed(Event):
    """The write handle allows compaction to the command's frontier; `writer` is process
    p's writer entry (before, after): per id, or one frontier for the shared point."""

    p: int
    command: tuple
    indexed: bool
    writer: tuple

    def words(self) -> str:
        shown, f = command_text(self.command), self.command[-1]
        if not self.indexed:
            return f"applies {shown}: its write handle allows compaction to {f} (writer)"
        name = INDEX_NAMES[cmd.index_of(self.command)]
        if isinstance(self.writer[1], tuple):
            return f"applies {shown}: its write handle for {name} allows compaction to {f} (writer)"
        return (f"applies {shown}: the point's one writer frontier becomes {f}, "
                f"overwritten by {name}'s AllowCompaction (it was {self.writer[0]})")

    def drawing(self) -> tuple:
        return handed(MAINTENANCE, self.p, "writer", "writer", *self.writer)


def maint_compact(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Compact(i, f): the write handle allows compaction to f (the id's own entry with
    per_id; with shared, the one frontier, whichever id wrote last)."""
    i, f = cmd.index_of(command), command[-1]
    writer = with_frontier(s.writer[p], i, f)
    if record is not None:
        record.append(WriterAllowed(p, command, s.ix is not None, (s.writer[p], writer)))
    return s._replace(writer=replace_at(s.writer, p, writer))


@event
class AcquireConsumed(Event):
    """Acquire(d, t) arrives after its release overtook it: the release is consumed."""

    d: int
    t: int

    def words(self) -> str:
        return (f"receives Acquire({self.d}, {self.t}) after the release overtook it: "
                "the release is consumed and no hold is installed")

    def drawing(self) -> tuple:
        return ()


@event
class HoldAcquired(Event):
    """Acquire(d, t) installs a read hold at t on process p; `acq` is acq[p] (before, after)."""

    p: int
    d: int
    t: int
    acq: tuple

    def words(self) -> str:
        return f"applies Acquire({self.d}, {self.t}): it installs a read hold at {self.t} for peek {self.d}"

    def drawing(self) -> tuple:
        return handed(MAINTENANCE, self.p, "acq", "acquired holds", *self.acq)


def maint_acquire(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Acquire(d, t): install a hold at t, unless the release overtook it and consumes it."""
    _, d, t = command
    if d in s.released[p]:
        if record is not None:
            record.append(AcquireConsumed(d, t))
        return s._replace(released=replace_at(s.released, p, s.released[p] - {d}))
    acq = replace_at(s.acq[p], d, t)
    if record is not None:
        record.append(HoldAcquired(p, d, t, (s.acq[p], acq)))
    return s._replace(acq=replace_at(s.acq, p, acq))


@event
class HoldReleased(Event):
    """Release(d) drops peek d's acquired hold at t; `acq` is acq[p] (before, after)."""

    p: int
    d: int
    t: int
    acq: tuple

    def words(self) -> str:
        return f"applies Release({self.d}): peek {self.d}'s acquired hold at {self.t} goes"

    def drawing(self) -> tuple:
        return handed(MAINTENANCE, self.p, "acq", "acquired holds", *self.acq)


@event
class ReleaseEarly(Event):
    """Release(d) arrives before its Acquire: maintenance records it for the Acquire to come."""

    d: int

    def words(self) -> str:
        return (f"receives Release({self.d}) before the acquisition: "
                "it records the release for the Acquire still to come")

    def drawing(self) -> tuple:
        return ()


def maint_release(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Release(d): drop d's acquired hold, or record the release for the Acquire to come."""
    d = command[1]
    if s.acq[p][d] is not None:
        acq = replace_at(s.acq[p], d, None)
        if record is not None:
            record.append(HoldReleased(p, d, s.acq[p][d], (s.acq[p], acq)))
        return s._replace(acq=replace_at(s.acq, p, acq))
    if record is not None:
        record.append(ReleaseEarly(d))
    return s._replace(released=replace_at(s.released, p, s.released[p] | {d}))


@event
class Exported(Event):
    """Y is published on process p. With `overwrite`, the readers of Y registered in the
    placeholder (`newly`) are stranded, `stranded` being stranded[p] (before, after);
    with `adopt`, the placeholder is backed in place (`backed`: it had readers)."""

    p: int
    newly: tuple
    backed: bool
    stranded: tuple

    def words(self) -> str:
        words = f"applies Export: it renders Y's re-export of X and publishes Y on process {self.p}"
        if self.newly:
            return (words + f"; the placeholder is replaced, and the reader of Y registered in it "
                    f"({peeks_phrase(self.newly)}) is stranded: its import will never read")
        if self.backed:
            return words + "; the placeholder is backed in place, and its readers read the arrangement"
        return words

    def drawing(self) -> tuple:
        return handed(MAINTENANCE, self.p, "stranded", "stranded readers", *self.stranded)


def maint_export(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Export: Y is published here. With `overwrite` the registry slot is replaced, and
    every reader of Y registered in the placeholder is stranded; with `adopt` the
    placeholder is backed in place (nothing beyond the pop)."""
    if cfg.reexport != "overwrite":
        if record is not None:
            record.append(Exported(p, (), bool(placeholder_readers(s, p)), (s.stranded[p], s.stranded[p])))
        return s
    placeholder = placeholder_readers(s, p)
    stranded = s.stranded[p] | placeholder
    if record is not None:
        record.append(Exported(p, tuple(sorted(placeholder - s.stranded[p])), False, (s.stranded[p], stranded)))
    return s._replace(stranded=replace_at(s.stranded, p, stranded))


def placeholder_readers(s: State, p: int) -> frozenset:
    """The peeks of Y registered on process p (in the placeholder, before Export)."""
    return frozenset(d for d in held(s.readers[p]) if index_of_peek(s, d) == 1)


MAINTENANCE_EFFECTS = {
    COMPACT: maint_compact,
    ACQUIRE: maint_acquire,
    RELEASE: maint_release,
    EXPORT: maint_export,
}

# ---------------------------------------------------- interactive, per command


@event
class ReaderRegistered(Event):
    """Peek d is rendered on process p: its import registers a read hold at t, in a
    placeholder if it reads Y before Y is published here; `readers` is readers[p]
    (before, after)."""

    p: int
    d: int
    t: int
    placeholder: bool
    readers: tuple

    def words(self) -> str:
        if self.placeholder:
            return (f"renders peek {self.d}: Y is not yet published here, so its import creates a "
                    f"placeholder for Y and registers a read hold at {self.t} in it")
        return f"renders peek {self.d}: it imports the arrangement and registers a read hold at {self.t}"

    def drawing(self) -> tuple:
        return handed(INTERACTIVE, self.p, "readers", "readers", *self.readers)


@event
class CapRetired(Event):
    """Process 0's frontier report retires the cap on peek d; the multiplexer may forward."""

    d: int
    forwarded: int | None
    P: int

    def words(self) -> str:
        words = f"its frontier report retires the cap on peek {self.d}"
        return words + f", and {forwards(self.forwarded)}" if self.forwarded is not None else words

    def drawing(self) -> tuple:
        report = Call(lane(INTERACTIVE, 0), MULTIPLEXER_LANE, "frontier report (retires the cap)")
        if self.forwarded is None:
            return (report,)
        return (report, sent_everywhere(MAINTENANCE, (COMPACT, self.forwarded), self.P))


def inter_create(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Create(d, i, t): render peek d; its import registers a read hold at t (into a
    placeholder if it reads Y before Y is published here). Under the cap, process 0's
    frontier report retires the cap on d."""
    d, t = command[1], command[-1]
    readers = replace_at(s.readers[p], d, t)
    if record is not None:
        placeholder = s.ix is not None and cmd.index_of(command) == 1 and not exported(s, p)
        record.append(ReaderRegistered(p, d, t, placeholder, (s.readers[p], readers)))
    s = s._replace(readers=replace_at(s.readers, p, readers))
    if cfg.cap and p == 0:
        after = forward(s._replace(caps=s.caps - {d}), cfg)
        if record is not None and d in s.caps:
            record.append(CapRetired(d, forwarded(s, after), cfg.P))
        s = after
    return s


@event
class ReaderDropped(Event):
    """Peek d's reader registration on process p goes (stranded or not); `readers` is
    readers[p] (before, after)."""

    p: int
    d: int
    stranded: bool
    readers: tuple

    def words(self) -> str:
        words = f"applies Drop({self.d}): peek {self.d}'s reader registration goes"
        return words + " (it was stranded)" if self.stranded else words

    def drawing(self) -> tuple:
        return handed(INTERACTIVE, self.p, "readers", "readers", *self.readers)


def inter_drop(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Drop(d): peek d's reader registration goes (stranded or not)."""
    d = command[1]
    readers = replace_at(s.readers[p], d, None)
    stranded = d in stranded_on(s, p)
    if record is not None:
        record.append(ReaderDropped(p, d, stranded, (s.readers[p], readers)))
    s = s._replace(readers=replace_at(s.readers, p, readers))
    if stranded:
        s = s._replace(stranded=replace_at(s.stranded, p, s.stranded[p] - {d}))
    return s


@event
class StandingRaised(Event):
    """Compact(i, f) raises process p's standing hold; `standing` is standing[p] (before, after)."""

    p: int
    command: tuple
    standing: tuple

    def words(self) -> str:
        shown, new = command_text(self.command), self.standing[1]
        if isinstance(new, int):
            return f"applies {shown}: its standing hold rises to {new}"
        return f"applies {shown}: its standing hold for {INDEX_NAMES[cmd.index_of(self.command)]} rises to {self.command[-1]}"

    def drawing(self) -> tuple:
        return handed(INTERACTIVE, self.p, "standing", "standing hold", *self.standing)


@event
class CompactIgnored(Event):
    """Compact(i, f) moves nothing on the interactive runtime: there is no standing hold,
    or it is at `standing` (process p's) already."""

    command: tuple
    indexed: bool
    standing: object

    def words(self) -> str:
        shown = command_text(self.command)
        if not self.indexed:
            return f"pops {shown} and ignores it (no standing hold in this design)"
        return (f"pops {shown}: the standing hold does not move "
                f"(it is at {value_text('standing', self.standing)} already, or this design has none)")

    def drawing(self) -> tuple:
        return ()


def inter_compact(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Compact(i, f): with a standing hold, record it (per id with per_id; otherwise the
    one hold rises to the highest frontier applied for either id); else only the pop."""
    if not cfg.standing_hold:
        if record is not None:
            record.append(CompactIgnored(command, s.ix is not None, s.standing[p]))
        return s
    i, f = cmd.index_of(command), command[-1]
    old = s.standing[p]
    new = replace_at(old, i, f) if isinstance(old, tuple) else max(old, f)
    if record is not None:
        record.append(StandingRaised(p, command, (old, new)) if new != old
                      else CompactIgnored(command, s.ix is not None, old))
    return s._replace(standing=replace_at(s.standing, p, new))


@event
class ReleaseNoted(Event):
    """Release(d) on the interactive runtime: recorded for maintenance to act on."""

    d: int

    def words(self) -> str:
        return f"applies Release({self.d}): it records the release for maintenance to act on"

    def drawing(self) -> tuple:
        return ()


def inter_release(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Release(d): record the release for maintenance to act on."""
    if record is not None:
        record.append(ReleaseNoted(command[1]))
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
    controller action) reads and writes. Its step takes `record` (a list, or None)
    and records there the events that narrate and draw it (protocol/events.py)."""

    name: str
    step: Callable  # (state, cfg, **arguments, record=None) -> next state or None
    parameters: Callable  # cfg -> [(label arguments, keyword arguments)]
    fair: bool  # a runtime action: weakly fair, per instance, when the configuration asks
    footprint: Callable  # (cfg, p) -> Footprint
    exists: Callable = always  # cfg -> whether the configuration has the action at all


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
    """With `overwrite`, applying Export reads which index each reader's peek is on (ix)."""
    return Footprint(LOCAL, ("ix",)) if cfg.reexport == "overwrite" else Footprint(LOCAL)


def inter_step_footprint(cfg, p) -> Footprint:
    """Process 0's frontier report retires the cap and may forward compaction."""
    return Footprint(WIDE) if cfg.cap and p == 0 else Footprint(LOCAL)


def publish_footprint(cfg, p) -> Footprint:
    return Footprint(LOCAL, ("upper",))  # physical compaction is bounded by upper


# ------------------------------------------------------------ the actions

ACTIONS = (
    Action("CreatePeek", create_peek, peek_times, False, controller),
    Action("DropPeek", drop_peek, peeks, False, controller),
    Action("AdvancePolicy", advance_policy, index_ids, False, controller),
    Action("Ingest", ingest, nothing, False, controller),
    Action("Reconnect", reconnect, nothing, False, controller, exists=lambda cfg: cfg.reconnect),
    Action("MaintStep", maint_step, processes, True, maint_step_footprint),
    Action("InterStep", inter_step, processes, True, inter_step_footprint),
    # Without acquisition nothing is ever released to reclaim.
    Action("Reclaim", reclaim, processes, True, local, exists=lambda cfg: cfg.acquire != "none"),
    Action("Publish", publish, processes, True, publish_footprint),
)


def by_name(name: str) -> Action:
    """The declared action `name`."""
    return next(action for action in ACTIONS if action.name == name)


def __getattr__(name: str):
    """BY_NAME (name -> Action) and RUNTIME_ACTIONS (the names of the runtime actions, weakly
    fair per process when the configuration asks for fairness), derived
    from ACTIONS when asked for, never bound at import."""
    if name == "BY_NAME":
        return {action.name: action for action in ACTIONS}
    if name == "RUNTIME_ACTIONS":
        return tuple(action.name for action in ACTIONS if action.fair)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
