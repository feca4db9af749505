"""The actions of model-spec sections 4, 10.3, 11.3 and 12.3: one pure function each, guard first.

Every action takes the state, the configuration and its arguments, and
returns the successor state, or None where its guard does not hold. No
action is a self-loop: an enabled action always changes the state.

A runtime step pops the head of its queue and applies it: each command
kind's effect on each runtime is one small function below
(`MAINTENANCE_EFFECTS`, `INTERACTIVE_EFFECTS`). At the end, `ACTIONS`
declares every action: its parameters, fairness and footprint.

What a step did is said by the events it records (protocol/model/events.py):
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

from protocol.model import commands as cmd
from protocol.model import state as schema
from protocol.model.commands import (
    ACQUIRE, COMPACT, CREATE, CREATE_INDEX, DROP, EXPORT, HELLO, INTERACTIVE, MAINTENANCE, RELEASE, bare, command_text,
    with_epoch,
)
from protocol.engine import CONTROLLER, EACH, LOCAL, WIDE, Footprint
from protocol.model.events import (
    CONTROLLER_LANE, MULTIPLEXER_LANE, Call, Event, Send, StepNote, event, forwards, handed, index_name, lane, listed,
    peeks_phrase, processes_phrase, sent_everywhere, value_text,
)
from protocol.model.where import (
    everywhere, with_acquisition, with_alias, with_created_index, with_free_controller, with_ingest, with_markers,
    with_policy,
    with_reader_downgrade, with_reconnect, with_reconnections, with_section_13, with_seal, with_silent_hello,
)
from protocol.model.state import (
    BOTTOM, DROPPED, INDEX_NAMES, LIVE, UNBORN, State, index_count, append_all, backed, ctl_holds, ctl_since, exported,
    frontier_at, held, ids, index_of_peek, notify, replace_at, servable, stranded_on, with_frontier,
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


def read_floor(s: State, cfg, i: int) -> int:
    """The least time the controller may read index i at: its read frontier under a policy;
    with a free controller, what it has allowed (it only reads where it has not released)."""
    return frontier_at(s.sent, i) if cfg.controller == "free" else ctl_since(s, i)


def index_live(s: State) -> bool:
    """The controller's index exists: always with a static index, after CreateIndex with a created one."""
    return s.ixs is None or s.ixs == LIVE


def sent_in(s: State, cfg) -> int | None:
    """The epoch a command sent now carries: the current one with `hello = silent`, else none (spec 12.6)."""
    return s.epoch if cfg.hello == "silent" else None


def create_peek(s: State, cfg, d: int, t: int, i: int = 0, record: list | None = None) -> State | None:
    """CreatePeek(d, i, t): the controller creates peek d reading index i at as_of t. With the
    stateless multiplexer the create reaches maintenance too (a peer record); with the design's
    silent reconnection it carries its epoch and clears every process's `drop_applied`."""
    if s.df[d] != UNBORN or UNBORN in s.df[:d]:
        return None  # ids are allocated in order: d must be the lowest unborn
    if not read_floor(s, cfg, i) <= t <= cfg.MaxTime or not index_live(s):
        return None
    indexed = with_alias(cfg)
    create = with_epoch(cmd.create(d, i, t, indexed), sent_in(s, cfg))
    mq, iq, caps = s.mq, append_all(s.iq, create), s.caps
    if cfg.multiplexer == "stateless":
        mq = append_all(mq, create)
    if cfg.acquire != "none":
        mq = append_all(mq, (ACQUIRE, d, t))  # a hold on the shared point, whichever id
    if cfg.cap:
        caps = caps | {d}
    if record is not None:
        record.append(PeekCreated(d, i, t, indexed))
        queued(record, INTERACTIVE, cfg.P, create)
        if cfg.multiplexer == "stateless":
            queued(record, MAINTENANCE, cfg.P, create)
        if cfg.acquire != "none":
            queued(record, MAINTENANCE, cfg.P, (ACQUIRE, d, t))
        if cfg.cap:
            record.append(CapRaised(d, t))
    ix = replace_at(s.ix, d, i) if indexed else s.ix
    after = s._replace(df=replace_at(s.df, d, LIVE), as_of=replace_at(s.as_of, d, t), ix=ix, mq=mq, iq=iq, caps=caps)
    if cfg.hello == "silent":
        after = after._replace(drop_applied=(False,) * cfg.P)
    return after


@event
class PeekDropped(Event):
    """The controller drops peek d: its read hold at as_of goes."""

    d: int
    as_of: int
    kept: bool = False  # with retirement reports: the hold stays until every process reports

    def words(self) -> str:
        if self.kept:
            return (f"the controller drops peek {self.d}: it keeps its read hold at {self.as_of} until every "
                    "process reports the dataflow retired")
        return f"the controller drops peek {self.d}: its read hold at {self.as_of} goes"

    def drawing(self) -> tuple:
        return (Call(CONTROLLER_LANE, MULTIPLEXER_LANE, f"Drop(peek {self.d})"),)

    def joined(self, clauses: list[str]) -> str:
        return listed(clauses)


def drop_peek(s: State, cfg, d: int, record: list | None = None) -> State | None:
    """DropPeek(d): the peek is done or cancelled; its hold on the index goes."""
    if s.df[d] != LIVE:
        return None
    drop = with_epoch((DROP, d), sent_in(s, cfg))
    iq, mq = append_all(s.iq, drop), s.mq
    if cfg.multiplexer == "stateless":
        mq = append_all(mq, drop)  # the peer record goes, before Compact runs
    released_on = None
    if cfg.acquire == "release_on_interactive":
        iq, released_on = append_all(iq, (RELEASE, d)), INTERACTIVE
    elif cfg.acquire == "release_on_maintenance":
        mq, released_on = append_all(mq, (RELEASE, d)), MAINTENANCE
    if record is not None:
        record.append(PeekDropped(d, s.as_of[d], cfg.ctl_release == "report"))
        queued(record, INTERACTIVE, cfg.P, drop)
        if cfg.multiplexer == "stateless":
            queued(record, MAINTENANCE, cfg.P, drop)
        if released_on is not None:
            queued(record, released_on, cfg.P, (RELEASE, d))
    return hold_freed(s._replace(df=replace_at(s.df, d, DROPPED), iq=iq, mq=mq), cfg, index_of_peek(s, d), record)


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
    if frontier_at(s.policy, i) >= cfg.MaxTime or not index_live(s):
        return None
    policy = frontier_at(s.policy, i) + 1
    if record is not None:
        record.append(PolicyAdvanced(i, policy, with_alias(cfg)))
    return compact(s._replace(policy=with_frontier(s.policy, i, policy)), cfg, i, record)


@event
class CompactionAllowed(Event):
    """A free controller allows index i to compact to t in one command: none of its own
    read holds on i is below t."""

    i: int
    t: int
    indexed: bool

    def words(self) -> str:
        whose = f" {INDEX_NAMES[self.i]}" if self.indexed else " the index"
        return f"the controller allows{whose} to compact to {self.t} (none of its read holds is below it)"

    def drawing(self) -> tuple:
        return ()

    def joined(self, clauses: list[str]) -> str:
        return listed(clauses)


def allow_compaction(s: State, cfg, t: int, i: int = 0, record: list | None = None) -> State | None:
    """AllowCompaction(i, t): a free controller allows index i to compact to any later time
    t in one command, never past a read hold of its own on i (spec 12.3)."""
    if not frontier_at(s.sent, i) < t <= cfg.MaxTime:
        return None
    if any(ctl_holds(s, d) and index_of_peek(s, d) == i and t > s.as_of[d] for d in range(len(s.df))):
        return None
    if record is not None:
        record.append(CompactionAllowed(i, t, with_alias(cfg)))
    return route_compaction(s, cfg, i, t, record)


@event
class UpperAdvanced(Event):
    """New data: the index's write frontier moves from `old` to `new`."""

    old: int
    new: int

    def words(self) -> str:
        return f"new data arrives: the index's write frontier (upper) advances to {self.new}"

    def drawing(self) -> tuple:
        return (StepNote(CONTROLLER_LANE, f": upper {self.old} to {self.new}"),)


@event
class TapNotified(Event):
    """A tap upstream of the publisher's sink notifies at Ingest, before the sink has
    published the new upper: `marked` lists (process, index id) it marked dirty."""

    marked: tuple
    indexed: bool

    def words(self) -> str:
        if not self.marked:
            return "the tap upstream of the sink notifies, but no peek is parked yet"
        where = ", ".join(f"index {INDEX_NAMES[i]} on process {p}" for p, i in self.marked)
        return f"the tap upstream of the sink notifies {where}, before the sink has published the new upper"

    def drawing(self) -> tuple:
        return tuple(Call(lane(MAINTENANCE, p), lane(INTERACTIVE, p), f"notify {INDEX_NAMES[i]} (tap, before the sink)")
                     for p, i in self.marked)


def ingest(s: State, cfg, record: list | None = None) -> State | None:
    """Ingest: new data advances the index's write frontier. With `seal = tap`, a tap
    upstream of the publisher's sink notifies every process now, before the sink has
    published the new upper (the lost wakeup)."""
    if s.upper >= cfg.MaxTime:
        return None
    if record is not None:
        record.append(UpperAdvanced(s.upper, s.upper + 1))
    after = s._replace(upper=s.upper + 1)
    if cfg.seal == "tap":
        for p in range(cfg.P):
            after = notify(after, p, ids(after, cfg, p))
        if record is not None:
            record.append(TapNotified(marked_dirty(s, after), with_alias(cfg)))
    return after


def marked_dirty(before: State, after: State) -> tuple:
    """(process, index id) of every notification a step recorded."""
    return tuple((p, i) for p, (old, new) in enumerate(zip(before.dirty, after.dirty)) for i in sorted(new - old))


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
    """Reconnect: the controller reconnects, as the configuration has it: section 10's
    discards the cap, section 13's queues a Hello marker, 12.6's queues nothing."""
    if cfg.reconnect:
        return reconnect_capped(s, cfg, record)
    if s.epoch is None or s.epoch >= cfg.E:
        return None
    if cfg.hello == "silent":
        return reconnect_silently(s, cfg, record)
    return reconnect_with_hello(s, cfg, record)


def reconnect_capped(s: State, cfg, record: list | None = None) -> State | None:
    """Reconnect (section 10): the controller reconnects (Hello); the multiplexer's per-connection
    state, the cap, is discarded while the queues keep the old connection's commands."""
    if not s.caps:
        return None
    after = forward(s._replace(caps=frozenset()), cfg)
    if record is not None:
        record.append(Reconnected(forwarded(s, after), cfg.P))
    return after


@event
class ReconnectedWithHello(Event):
    """The controller reconnects (section 13): it forgets the live peeks `forgotten` (no Drop is
    sent), and Hello is queued behind every stream's commands; the runtimes clear nothing."""

    epoch: int
    forgotten: tuple
    P: int

    def words(self) -> str:
        forgets = f" and forgets {peeks_phrase(self.forgotten)}, whose read hold goes (no Drop is sent)" \
            if self.forgotten else ""
        return (f"the controller reconnects (epoch {self.epoch}){forgets}; Hello is queued behind the old "
                "connection's commands on every stream")

    def drawing(self) -> tuple:
        return (Call(CONTROLLER_LANE, MULTIPLEXER_LANE, f"reconnect (epoch {self.epoch})"),
                sent_everywhere(MAINTENANCE, (HELLO,), self.P), sent_everywhere(INTERACTIVE, (HELLO,), self.P))

    def joined(self, clauses: list[str]) -> str:
        return listed(clauses)


def reconnect_with_hello(s: State, cfg, record: list | None = None) -> State | None:
    """Reconnect (section 13): the controller takes a new connection and forgets every live peek,
    sending no Drop; Hello is queued on every stream, and Compact runs (the forgotten holds are gone)."""
    forgotten = tuple(d for d, status in enumerate(s.df) if status == LIVE)
    df = tuple(DROPPED if status == LIVE else status for status in s.df)
    if record is not None:
        record.append(ReconnectedWithHello(s.epoch + 1, forgotten, cfg.P))
    after = s._replace(epoch=s.epoch + 1, df=df, mq=append_all(s.mq, (HELLO,)), iq=append_all(s.iq, (HELLO,)))
    return compact(after, cfg, 0, record)


@event
class ReconnectedSilently(Event):
    """The controller reconnects as the design's model has it: it forgets its peek and that peek's
    read hold, and takes epoch `epoch`; nothing is queued, and the replica is not told."""

    epoch: int
    forgot: bool

    def words(self) -> str:
        forgets = "forgets peek 0 and its read hold (its queued commands still execute), and " if self.forgot else ""
        return (f"the controller reconnects: it {forgets}takes epoch {self.epoch}; nothing is queued and "
                "the replica is not told")

    def drawing(self) -> tuple:
        return (Call(CONTROLLER_LANE, MULTIPLEXER_LANE, f"Hello (epoch {self.epoch}, nothing queued)"),)


def reconnect_silently(s: State, cfg, record: list | None = None) -> State | None:
    """Reconnect (spec 12.6): a new epoch; peek 0 is Unborn again, whatever it was, so it may be
    created again; no queue and no process changes."""
    if record is not None:
        record.append(ReconnectedSilently(s.epoch + 1, s.df[0] != UNBORN))
    return s._replace(epoch=s.epoch + 1, df=replace_at(s.df, 0, UNBORN), as_of=replace_at(s.as_of, 0, 0))


@event
class IndexCreated(Event):
    """The controller creates the index at as_of `a` (its CreateDataflow, class Maintained);
    `a` is its first frontier: policy and sent start there."""

    a: int

    def words(self) -> str:
        return f"the controller creates the index at as_of {self.a} (its policy and sent frontier start there)"

    def drawing(self) -> tuple:
        return (Call(CONTROLLER_LANE, MULTIPLEXER_LANE, f"CreateDataflow(index, as_of {self.a})"),)

    def joined(self, clauses: list[str]) -> str:
        return ": " + "; ".join(clauses) if clauses else ""


def create_index(s: State, cfg, a: int, record: list | None = None) -> State | None:
    """CreateIndex(a) (spec 13.3): the controller creates the index at as_of a, once; the create
    goes to both runtimes of every process. No Compact runs: no peek is live yet."""
    if s.ixs != UNBORN or not 0 <= a <= cfg.MaxTime:
        return None
    command = (CREATE_INDEX, a)
    if record is not None:
        record.append(IndexCreated(a))
        queued(record, MAINTENANCE, cfg.P, command)
        queued(record, INTERACTIVE, cfg.P, command)
    return s._replace(ixs=LIVE, ix_as_of=a, policy=a, sent=a,
                      mq=append_all(s.mq, command), iq=append_all(s.iq, command))


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
                 if ctl_holds(s, d) and s.as_of[d] == frontier and index_of_peek(s, d) == i), None)


def compact(s: State, cfg, i: int = 0, record: list | None = None) -> State:
    """Compact(i) (part of a step): issue AllowCompaction(i) if i's read frontier rose."""
    frontier = ctl_since(s, i)
    if frontier <= frontier_at(s.sent, i):
        if record is not None:
            record.append(CompactionHeld(frontier, frontier_holder(s, i, frontier)))
        return s
    return route_compaction(s, cfg, i, frontier, record)


@event
class CompactionLeftOpen(Event):
    """A free controller freed a read hold and issues nothing: a later AllowCompaction may
    go further."""

    def words(self) -> str:
        return "no AllowCompaction is sent (a free controller allows compaction later, in a command of its own)"

    def drawing(self) -> tuple:
        return ()


def hold_freed(s: State, cfg, i: int, record: list | None) -> State:
    """The controller has freed a read hold on index i (a drop, or the last retirement
    report): under a policy it runs Compact(i); a free controller issues nothing, and the
    freed hold lets a later AllowCompaction go further."""
    if cfg.controller == "policy":
        return compact(s, cfg, i, record)
    if record is not None:
        record.append(CompactionLeftOpen())
    return s


def route_compaction(s: State, cfg, i: int, frontier: int, record: list | None = None) -> State:
    """Set sent[i] to `frontier` and route Compact(i, frontier): with the cap by Forward,
    else to every maintenance stream, and with broadcast to every interactive one too."""
    s = s._replace(sent=with_frontier(s.sent, i, frontier))
    if cfg.cap:
        after = forward(s, cfg)
        if record is not None:
            moved = forwarded(s, after)
            record.append(CompactionCapped(frontier) if moved is None
                          else CompactionForwarded(frontier, moved, cfg.P))
        return after
    command = with_epoch(cmd.compact(i, frontier, with_alias(cfg)), sent_in(s, cfg))
    if cfg.compaction == "routed":
        runtimes, after = (MAINTENANCE,), s._replace(mq=append_all(s.mq, command))
    else:
        runtimes = (MAINTENANCE, INTERACTIVE)
        after = s._replace(mq=append_all(s.mq, command), iq=append_all(s.iq, command))
    if record is not None:
        record.append(CompactionSent(i, frontier, with_alias(cfg), command, runtimes, cfg.P))
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
    return MAINTENANCE_EFFECTS[command[0]](popped, cfg, p, bare(command), record)


def maint_step_idle(s: State, cfg, p: int) -> str:
    """Why MaintStep(p) is disabled: every effect applies, so only an empty stream stops it."""
    return f"its stream mq[{p}] is empty"


def inter_step(s: State, cfg, p: int, record: list | None = None) -> State | None:
    """InterStep(p): process p's interactive runtime applies its next command."""
    if not s.iq[p]:
        return None
    command = s.iq[p][0]
    popped = s._replace(iq=replace_at(s.iq, p, s.iq[p][1:]))
    if record is not None:
        record.append(Applied(INTERACTIVE, p, command))
    return INTERACTIVE_EFFECTS[command[0]](popped, cfg, p, bare(command), record)


def inter_step_idle(s: State, cfg, p: int) -> str:
    """Why InterStep(p) is disabled: every effect applies, so only an empty stream stops it."""
    return f"its stream iq[{p}] is empty"


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


def reclaim_idle(s: State, cfg, p: int) -> str:
    """Why Reclaim(p) is disabled: no acquired hold on p whose release p has seen."""
    return f"no acquired hold on process {p} has had its release recorded"


def publish_holds(s: State, cfg, p: int) -> list[tuple]:
    """Every hold on process p's publication point, as (kind, whose, time): the writer
    (every id's entry but ⊥), the standing hold if any, every reader not stranded (unless
    readers do not bound it, `reader_bound = false`), every acquired hold."""
    holds = [hold for hold in frontier_holds("writer", s.writer[p]) if hold[2] != BOTTOM]
    if cfg.standing_hold:
        kind = "peer hold" if with_section_13(cfg) else "standing"
        holds += [hold for hold in frontier_holds(kind, s.standing[p]) if hold[2] != BOTTOM]
    if s.orphan[p] is not None and s.orphan[p] != BOTTOM:
        holds.append(("orphan hold", None, s.orphan[p]))
    if cfg.reader_bound:
        stranded = stranded_on(s, p)
        holds += [("reader", d, t) for d, t in enumerate(s.readers[p]) if t is not None and d not in stranded]
    holds += [("acquired", d, t) for d, t in enumerate(s.acq[p]) if t is not None]
    return holds


def frontier_holds(kind: str, frontier) -> list[tuple]:
    """A writer or standing hold: one (kind, None, t), or one per index id (kind, i, t)."""
    if isinstance(frontier, int):
        return [(kind, None, frontier)]
    return [(kind, i, t) for i, t in enumerate(frontier)]


def publish_bound(s: State, cfg, p: int) -> int | None:
    """The least hold on process p's publication point; None where nothing is left."""
    return min((t for _, _, t in publish_holds(s, cfg, p)), default=None)


@event
class Published(Event):
    """Process p's publisher raises since (to the least of `holds`) and physical compaction
    (bounded by upper); each pair is (before, after)."""

    p: int
    since: tuple
    physical: tuple
    upper: int
    holds: tuple
    # with physical = from_cuts: the readers' cuts ((peek, cut), ...) and the coverage pub[p]
    cuts: tuple | None = None
    coverage: int | None = None

    def words(self) -> str:
        said = []
        if self.since[1] != self.since[0]:
            holds = ", ".join(hold_words(*hold) for hold in self.holds)
            verb = "raises" if self.since[1] > self.since[0] else "lowers"
            said.append(f"{verb} the published since from {self.since[0]} to {self.since[1]} "
                        f"(the least of its holds: {holds})")
        if self.physical[1] != self.physical[0]:
            said.append(f"forwards physical compaction to {self.physical[1]} ({self.physical_reason()})")
        return f"process {self.p}'s publisher " + ", and ".join(said)

    def physical_reason(self) -> str:
        """What physical compaction followed: upper, or the least cut, or the coverage."""
        if self.cuts is None:
            return f"upper is {self.upper}"
        if self.cuts:
            d, cut = min(self.cuts, key=lambda entry: entry[1])
            return f"the least declared cut, peek {d}'s at {cut}"
        return f"no reader is registered: the chain's coverage, the published upper {self.coverage}"

    def drawing(self) -> tuple:
        return (StepNote(lane("pub", self.p), f": since {self.since[1]}, physical {self.physical[1]}"),)


def frontier_hold_words(kind: str) -> Callable:
    """A hold kept per index id, or one for the point: `writer 1`, `standing Y 0`."""
    return lambda whose, t: f"{kind} {t}" if whose is None else f"{kind} {INDEX_NAMES[whose]} {t}"


# Every kind of hold `publish_holds` lists, and how a step names it (`whose`: the peek whose hold
# it is, or the index id of a frontier kept per id, or None). A new kind declares its words here.
HOLD_WORDS = {
    "writer": frontier_hold_words("writer"),
    "standing": frontier_hold_words("standing"),
    "peer hold": frontier_hold_words("peer hold"),
    "orphan hold": lambda whose, t: f"orphan hold {t} (no peer took it over)",
    "reader": lambda whose, t: f"peek {whose}'s reader {t}",
    "acquired": lambda whose, t: f"peek {whose}'s acquired hold {t}",
}


def hold_words(kind: str, whose, t: int) -> str:
    """One of `publish_holds`, named: `writer 1`, `standing Y 0`, `peek 0's reader 1`."""
    words = HOLD_WORDS.get(kind)
    if words is None:
        raise KeyError(f"the hold kind {kind!r} declares no words: add it to HOLD_WORDS in protocol/model/actions.py")
    return words(whose, t)


def publish(s: State, cfg, p: int, record: list | None = None) -> State | None:
    """Publish(p): process p's publisher raises since and physical compaction to its bound
    (physical compaction to the least reader's cut, or the coverage, with `from_cuts`)."""
    if s.published[p] is False:
        return None  # with a created index: nothing published here yet
    since = published_since(s, cfg, p)
    cuts = None
    if cfg.physical == "from_since":
        physical = max(s.physical[p], min(since, s.upper))
    elif cfg.physical == "from_upper":
        physical = max(s.physical[p], s.upper)
    else:
        cuts = held(s.cut[p])
        physical = max(s.physical[p], min(cuts.values()) if cuts else s.pub[p])
    if (since, physical) == (s.since[p], s.physical[p]):
        return None
    if record is not None:
        record.append(Published(p, (s.since[p], since), (s.physical[p], physical), s.upper,
                                tuple(publish_holds(s, cfg, p)), None if cuts is None else tuple(cuts.items()),
                                None if cuts is None else s.pub[p]))
    return s._replace(
        since=replace_at(s.since, p, since), physical=replace_at(s.physical, p, physical)
    )


def publish_idle(s: State, cfg, p: int) -> str:
    """Why Publish(p) is disabled: which bound keeps since (and physical compaction) where they are."""
    if s.published[p] is False:
        return f"nothing is published on process {p} yet (the index's create has not reached its maintenance)"
    holds = publish_holds(s, cfg, p)
    if not holds:
        kept = f"no hold is left on process {p}'s publication point to raise since from {s.since[p]}"
    else:
        least = min(t for _, _, t in holds)
        bounds = [hold_words(*hold) for hold in holds if hold[2] == least]
        others = [hold_words(*hold) for hold in holds if hold[2] != least]
        kept = (f"its least hold{'s' if len(bounds) > 1 else ''}, {', '.join(bounds)}, "
                f"keep{'' if len(bounds) > 1 else 's'} since at {s.since[p]}"
                + (f" (other holds: {', '.join(others)})" if others else ""))
    return kept + f"; physical compaction is at its bound, {s.physical[p]}"


@event
class Sealed(Event):
    """Process p's publisher sink publishes upper `pub` as the chain's coverage; `marked`
    are the index ids it notified and marked dirty; `waiting` the ids its parked peeks
    read, `dirty` those already marked, `sink` whether this design's seal notifies."""

    p: int
    pub: int
    marked: tuple
    waiting: tuple
    dirty: tuple
    sink: bool

    def words(self) -> str:
        words = f"process {self.p}'s publisher sink publishes upper {self.pub}"
        if self.marked:
            return words + " and notifies " + " and ".join(f"index {INDEX_NAMES[i]}" for i in self.marked)
        if not self.waiting:
            return words + (" (no peek is parked here)" if self.sink else "; no seal signal here (the tap notified before)")
        if set(self.waiting) <= set(self.dirty):
            return words + "; what its parked peeks read is already marked for re-examination"
        if not self.sink:
            return words + ", and nothing notifies the parked peek (the tap fired before the sink published)"
        return words + " and notifies index X only: no seal signal reaches the parked reader of Y"

    def drawing(self) -> tuple:
        return (StepNote(lane("pub", self.p), f": publishes upper {self.pub}"),
                *(Call(lane("pub", self.p), lane(INTERACTIVE, self.p), f"notify {INDEX_NAMES[i]}") for i in self.marked))


def seal(s: State, cfg, p: int, record: list | None = None) -> State | None:
    """Seal(p): process p's publisher sink publishes the write frontier as the chain's
    upper; with `seal = sink` it then notifies the ids the seal names."""
    if s.pub[p] >= s.upper:
        return None
    after = s._replace(pub=replace_at(s.pub, p, s.upper))
    if cfg.seal == "sink":
        after = notify(after, p, ids(after, cfg, p))
    if record is not None:
        waiting = tuple(sorted({index_of_peek(s, d) for d in s.parked[p]}))
        record.append(Sealed(p, s.upper, tuple(sorted(after.dirty[p] - s.dirty[p])), waiting,
                             tuple(sorted(s.dirty[p])), cfg.seal == "sink"))
    return after


def seal_idle(s: State, cfg, p: int) -> str:
    """Why Seal(p) is disabled: the published upper has caught up with the write frontier."""
    return f"the published upper pub[{p}] = {s.pub[p]} has reached upper {s.upper}"


@event
class Woken(Event):
    """Process p's peek server re-examines the peeks parked on the notified `ids`: it
    serves `served` (the published upper `pub` is past their as_of); `still` stay parked."""

    p: int
    ids: tuple
    served: tuple
    still: tuple
    pub: int

    def words(self) -> str:
        words = (f"process {self.p}'s peek server re-examines the peeks parked on "
                 + " and ".join(f"index {INDEX_NAMES[i]}" for i in self.ids))
        said = []
        if self.served:
            said.append(f"{peeks_phrase(self.served)} {'is' if len(self.served) == 1 else 'are'} served "
                        f"(the published upper {self.pub} is past the as_of)")
        if self.still:
            said.append(f"{peeks_phrase(self.still)} {'stays' if len(self.still) == 1 else 'stay'} parked")
        return words + (": " + "; ".join(said) if said else "")

    def drawing(self) -> tuple:
        served = ", ".join(f"serves peek {d}" for d in self.served) or "nothing to serve"
        return (StepNote(lane(INTERACTIVE, self.p), f": {served}"),)


def wake(s: State, cfg, p: int, record: list | None = None) -> State | None:
    """Wake(p): process p's peek server re-examines the parked peeks of every notified id
    and serves those it now can; the notifications are consumed."""
    if not s.dirty[p]:
        return None
    examined = {d for d in s.parked[p] if index_of_peek(s, d) in s.dirty[p]}
    served = {d for d in examined if servable(s, p, d)}
    if record is not None:
        record.append(Woken(p, tuple(sorted(s.dirty[p])), tuple(sorted(served)), tuple(sorted(examined - served)),
                            s.pub[p]))
    return s._replace(parked=replace_at(s.parked, p, s.parked[p] - served),
                      dirty=replace_at(s.dirty, p, frozenset()))


def wake_idle(s: State, cfg, p: int) -> str:
    """Why Wake(p) is disabled: no index id is notified on p."""
    return f"no index is notified on process {p} (dirty[{p}] is empty)"


@event
class ReaderDowngraded(Event):
    """Peek d's reader on process p has made progress: its import's registration rises to
    t (it needs less); `readers` is readers[p] (before, after)."""

    p: int
    d: int
    t: int
    readers: tuple

    def words(self) -> str:
        return (f"process {self.p}'s reader of peek {self.d} has made progress: its import's registration "
                f"rises from {self.readers[0][self.d]} to {self.t}")

    def drawing(self) -> tuple:
        return (StepNote(lane(INTERACTIVE, self.p), f": peek {self.d}'s reader at {self.t}"),
                *handed(INTERACTIVE, self.p, "readers", "readers", *self.readers))


def reader_downgrade(s: State, cfg, p: int, d: int, t: int, record: list | None = None) -> State | None:
    """ReaderDowngrade(p, d, t): peek d's reader on p has read up to t and needs less: its
    registration rises to t. A reader in an unbacked placeholder, or parked, has read
    nothing yet."""
    hold = s.readers[p][d]
    if hold is None or not hold < t <= cfg.MaxTime:
        return None
    if not backed(s, p, d) or (s.parked[p] is not None and d in s.parked[p]):
        return None
    readers = replace_at(s.readers[p], d, t)
    if record is not None:
        record.append(ReaderDowngraded(p, d, t, (s.readers[p], readers)))
    return s._replace(readers=replace_at(s.readers, p, readers))


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
        record.append(WriterAllowed(p, command, with_alias(cfg), (s.writer[p], writer)))
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
    notified: bool | None = None  # with a seal: whether Y's publication marked a parked reader of Y

    def words(self) -> str:
        words = f"applies Export: it renders Y's re-export of X and publishes Y on process {self.p}"
        if self.notified is not None:
            words += "; Y's publication notifies Y" if self.notified else \
                "; Y's publication notifies Y, but no reader of Y is parked"
        if self.newly:
            return (words + f"; the placeholder is replaced, and the reader of Y registered in it "
                    f"({peeks_phrase(self.newly)}) is stranded: its import will never read")
        if self.backed:
            return words + "; the placeholder is backed in place, and its readers read the arrangement"
        return words

    def drawing(self) -> tuple:
        notify_y = (Call(lane(MAINTENANCE, self.p), lane(INTERACTIVE, self.p), "notify Y (published)"),) \
            if self.notified else ()
        return handed(MAINTENANCE, self.p, "stranded", "stranded readers", *self.stranded) + notify_y


def maint_export(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Export: Y is published here. With `overwrite` the registry slot is replaced, and
    every reader of Y registered in the placeholder is stranded; with `adopt` the
    placeholder is backed in place (nothing beyond the pop). With a seal, Y's
    publication notifies Y."""
    placeholder = placeholder_readers(s, p)
    if cfg.reexport == "overwrite":
        after = s._replace(stranded=replace_at(s.stranded, p, s.stranded[p] | placeholder))
        newly, backed = tuple(sorted(placeholder - s.stranded[p])), False
    else:
        after, newly, backed = s, (), bool(placeholder)
    if cfg.seal != "none":
        after = notify(after, p, (1,))
    if record is not None:
        notified = after.dirty[p] != s.dirty[p] if cfg.seal != "none" else None
        record.append(Exported(p, newly, backed, (s.stranded[p], after.stranded[p]), notified))
    return after


def placeholder_readers(s: State, p: int) -> frozenset:
    """The peeks of Y registered on process p (in the placeholder, before Export)."""
    return frozenset(d for d in held(s.readers[p]) if index_of_peek(s, d) == 1)


def registered_at(cfg, a: int, since: int) -> int:
    """reg(p, a) of spec 13.2: where a peer hold is registered, given the published since."""
    if cfg.peer_at == "join":
        return max(a, since)
    return a if cfg.peer_at == "as_of" else 0


@event
class IndexPublished(Event):
    """Maintenance on process p renders the index and publishes it; `since` and `writer` are
    (before, after); `hold` says which hold it registers: ("peer", t), ("orphan", t), or
    ("taken", t) (the peer recorded first registered it at t), or None (it registers none)."""

    p: int
    a: int
    since: tuple
    hold: tuple | None

    def words(self) -> str:
        words = f"publishes the index (as_of {self.a}: its since is {self.since[1]}, its writer {self.a})"
        if self.hold is None:
            return words + " and registers no hold (the reading runtime will)"
        kind, t = self.hold
        if kind == "peer":
            return words + f" and registers the peer hold at {t}"
        if kind == "orphan":
            return words + f" and registers a hold of its own at {t}, which no peer will take over"
        return words + f"; the peer hold the interactive runtime registered at {t} is taken over"

    def drawing(self) -> tuple:
        said = f": publishes the index, since {self.since[1]}"
        if self.hold is not None and self.hold[0] in ("peer", "orphan"):
            said += f", {self.hold[0]} hold {self.hold[1]}"
        return (StepNote(lane(MAINTENANCE, self.p), said),)


def maint_create_index(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """CreateIndex(a) on maintenance: publish. since rises to a, the writer starts at a; then,
    with reg evaluated on the since just set, the publisher registers the peer hold if no
    peer registered it first (or, unpaired, an orphan hold of its own)."""
    a = command[1]
    since = max(s.since[p], a)
    after = s._replace(published=replace_at(s.published, p, True), since=replace_at(s.since, p, since),
                       writer=replace_at(s.writer, p, a))
    hold = None
    if cfg.pairing == "none":
        hold = ("orphan", registered_at(cfg, a, since))
        after = after._replace(orphan=replace_at(after.orphan, p, hold[1]))
    elif s.standing[p] != BOTTOM:
        hold = ("taken", s.standing[p])
    elif cfg.peer_by == "publisher":
        hold = ("peer", registered_at(cfg, a, since))
        after = after._replace(standing=replace_at(after.standing, p, hold[1]))
    if record is not None:
        record.append(IndexPublished(p, a, (s.since[p], since), hold))
    return after


@event
class PeerRecorded(Event):
    """Maintenance on process p pops a peek's create or drop: it records (or forgets) the peek's
    exports as peers; nothing it holds changes."""

    command: tuple

    def words(self) -> str:
        if self.command[0] == CREATE:
            return (f"pops {command_text(self.command)}: a peek it does not render, so it records the "
                    "peek's exports as peers (nothing it holds changes)")
        return f"pops {command_text(self.command)}: it forgets the peek's peer record"

    def drawing(self) -> tuple:
        return ()


def maint_peer_record(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Create(d, t) or Drop(d) on maintenance (the stateless multiplexer): a peer recorded or
    forgotten; a peek dataflow's exports are transient, so nothing beyond the pop."""
    if record is not None:
        record.append(PeerRecorded(command))
    return s


@event
class Reconciled(Event):
    """A runtime of process p pops Hello and reconciles against the new connection's history:
    `dropped` the readers it drops, `cleared` the peer hold it unregisters (before), if any."""

    runtime: str
    p: int
    dropped: tuple
    cleared: int | None
    kept: tuple = ()

    def words(self) -> str:
        if self.runtime == MAINTENANCE:
            return "pops Hello and reconciles: it renders no peek and keeps the index (nothing changes)"
        said = []
        if self.dropped:
            said.append(f"reconciliation drops {readers_phrase(self.dropped)}, which the new connection does not know")
        elif self.kept:
            said.append(f"reconciliation keeps {readers_phrase(self.kept)}, which the new connection does not know")
        if self.cleared is not None:
            said.append(f"the peer hold at {self.cleared} is cleared")
        return "pops Hello: " + ("; ".join(said) if said else "nothing to reconcile (it clears nothing)")

    def drawing(self) -> tuple:
        return (StepNote(lane(self.runtime, self.p), ": Hello, reconciles"),)


def readers_phrase(peeks: tuple) -> str:
    return ("reader " if len(peeks) == 1 else "readers ") + ", ".join(map(str, peeks))


def maint_hello(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Hello on maintenance: it reconciles; it renders no peek and keeps the index, so nothing
    beyond the pop."""
    if record is not None:
        record.append(Reconciled(MAINTENANCE, p, (), None))
    return s


MAINTENANCE_EFFECTS = {
    COMPACT: maint_compact,
    ACQUIRE: maint_acquire,
    RELEASE: maint_release,
    EXPORT: maint_export,
    CREATE_INDEX: maint_create_index,
    CREATE: maint_peer_record,
    DROP: maint_peer_record,
    HELLO: maint_hello,
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
        placeholder = with_alias(cfg) and cmd.index_of(command) == 1 and not exported(s, p)
        record.append(ReaderRegistered(p, d, t, placeholder, (s.readers[p], readers)))
    s = s._replace(readers=replace_at(s.readers, p, readers))
    if cfg.cap and p == 0:
        after = forward(s._replace(caps=s.caps - {d}), cfg)
        if record is not None and d in s.caps:
            record.append(CapRetired(d, forwarded(s, after), cfg.P))
        s = after
    if cfg.seal != "none":
        parks = not servable(s, p, d)
        if parks:
            s = s._replace(parked=replace_at(s.parked, p, s.parked[p] | {d}))
        if record is not None:
            record.append(SealWaited(p, d, t, s.pub[p], parks, not backed_at_once(s, p, d)))
    if cfg.physical == "from_cuts":
        at = s.pub[p] if cfg.cut_floor == "coverage" else s.upper
        cut = replace_at(s.cut[p], d, at)
        if record is not None:
            record.append(CutDeclared(p, d, at, cfg.cut_floor, (s.cut[p], cut)))
        s = s._replace(cut=replace_at(s.cut, p, cut))
    return s


def backed_at_once(s: State, p: int, d: int) -> bool:
    """A reader of X, or of Y once Y is published here: its import reads the arrangement."""
    return index_of_peek(s, d) == 0 or exported(s, p)


@event
class SealWaited(Event):
    """With a seal, a rendered peek d is served at once (the published upper `pub` of
    process p is past its as_of t) or parks, reading `pub` (or a placeholder)."""

    p: int
    d: int
    t: int
    pub: int
    parks: bool
    placeholder: bool

    def words(self) -> str:
        if not self.parks:
            return f"the published upper {self.pub} is past its as_of {self.t}: the peek is served at once"
        if self.placeholder:
            return "the peek reads a placeholder Y not yet published here and parks"
        return f"the peek reads the published upper {self.pub} and parks"

    def drawing(self) -> tuple:
        if not self.parks:
            return ()
        return (Call(lane(INTERACTIVE, self.p), lane(INTERACTIVE, self.p),
                     f"peek {self.d} parks: published upper {self.pub}"),)


@event
class CutDeclared(Event):
    """With physical cuts, peek d's reader on p declares its cut `at`: the chain's
    coverage, or the write frontier (`cut_floor = upper`); `cut` is cut[p] (before, after)."""

    p: int
    d: int
    at: int
    floor: str
    cut: tuple

    def words(self) -> str:
        source = "the chain's coverage" if self.floor == "coverage" else "the write frontier upper"
        return f"its reader declares a cut at {self.at} ({source})"

    def drawing(self) -> tuple:
        return handed(INTERACTIVE, self.p, "cut", "declared cuts", *self.cut)


@event
class ReaderDropped(Event):
    """Peek d's reader registration on process p goes (stranded or not); `readers` is
    readers[p] (before, after)."""

    p: int
    d: int
    stranded: bool
    readers: tuple
    parked: bool = False  # with a seal: it was parked
    cut: int | None = None  # with physical cuts: the cut that goes with it

    def words(self) -> str:
        words = f"applies Drop({self.d}): peek {self.d}'s reader registration goes"
        if self.stranded:
            words += " (it was stranded)"
        if self.parked:
            words += " (it was parked on the seal)"
        return words + (f", with its cut at {self.cut}" if self.cut is not None else "")

    def drawing(self) -> tuple:
        return handed(INTERACTIVE, self.p, "readers", "readers", *self.readers)


def inter_drop(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Drop(d): peek d's reader registration goes (stranded or not), and so do its parking
    and its cut. With retirement reports, p reports d retired (unless the multiplexer
    filters it, or a parked peek is cancelled silently); the last report lets the
    controller free the hold, and Compact runs in the same step."""
    d = command[1]
    readers = replace_at(s.readers[p], d, None)
    stranded = d in stranded_on(s, p)
    was_parked = cfg.seal != "none" and d in s.parked[p]
    if record is not None:
        cut = s.cut[p][d] if cfg.physical == "from_cuts" else None
        record.append(ReaderDropped(p, d, stranded, (s.readers[p], readers), was_parked, cut))
    s = s._replace(readers=replace_at(s.readers, p, readers))
    if stranded:
        s = s._replace(stranded=replace_at(s.stranded, p, s.stranded[p] - {d}))
    if cfg.seal != "none":
        parked = s.parked[p] - {d}
        still_read = {index_of_peek(s, e) for e in parked}
        s = s._replace(parked=replace_at(s.parked, p, parked),
                       dirty=replace_at(s.dirty, p, s.dirty[p] & still_read))
    if cfg.physical == "from_cuts":
        s = s._replace(cut=replace_at(s.cut, p, replace_at(s.cut[p], d, None)))
    if cfg.ctl_release == "report":
        s = report_retired(s, cfg, p, d, was_parked, record)
    if cfg.hello == "silent":
        s = s._replace(drop_applied=replace_at(s.drop_applied, p, True))
    return s


def reports(cfg, was_parked: bool) -> bool:
    """Whether the retirement report of an applied Drop reaches the controller."""
    if cfg.report == "owner_filter":
        return False  # the drop evicted the owner already: the multiplexer filters the report
    return not (cfg.report == "silent_cancel" and was_parked)


@event
class RetirementReported(Event):
    """Process p reports peek d's dataflow retired (`lost`: the report does not arrive,
    `filtered` by the multiplexer or the parked peek `silent`ly cancelled); `freed`: it was
    the last report, so the controller frees the hold at as_of and may compact."""

    p: int
    d: int
    lost: str | None  # None, "filtered" or "silent"
    freed: bool
    as_of: int

    def words(self) -> str:
        if self.lost == "filtered":
            return f"the report of process {self.p} is filtered: the multiplexer no longer owns peek {self.d}"
        if self.lost == "silent":
            return f"the parked peek is cancelled without a report: process {self.p} never reports peek {self.d} retired"
        words = f"process {self.p} reports peek {self.d}'s dataflow retired"
        if self.freed:
            words += f"; every process has reported, so the controller frees its read hold at {self.as_of}"
        return words

    def drawing(self) -> tuple:
        if self.lost is not None:
            return (Call(lane(INTERACTIVE, self.p), MULTIPLEXER_LANE,
                         f"no report of peek {self.d} reaches the controller"),)
        return (Call(lane(INTERACTIVE, self.p), CONTROLLER_LANE, f"retired (peek {self.d})"),)


def report_retired(s: State, cfg, p: int, d: int, was_parked: bool, record: list | None) -> State:
    """The retirement report of p's Drop(d); the last one frees the controller's hold."""
    if not reports(cfg, was_parked):
        if record is not None:
            lost = "filtered" if cfg.report == "owner_filter" else "silent"
            record.append(RetirementReported(p, d, lost, False, s.as_of[d]))
        return s
    s = s._replace(reported=replace_at(s.reported, p, s.reported[p] | {d}),
                   reports=replace_at(s.reports, d, s.reports[d] + 1))
    freed = s.reports[d] == cfg.P
    if record is not None:
        record.append(RetirementReported(p, d, None, freed, s.as_of[d]))
    return hold_freed(s, cfg, index_of_peek(s, d), record) if freed else s


@event
class StandingRaised(Event):
    """Compact(i, f) raises process p's standing hold; `standing` is standing[p] (before, after)."""

    p: int
    command: tuple
    standing: tuple
    peer: bool = False  # section 13: the standing hold is the peer hold

    def words(self) -> str:
        shown, new = command_text(self.command), self.standing[1]
        if self.peer and self.standing[0] == BOTTOM:
            return f"applies {shown}: it registers the peer hold again, at {new}"
        if self.peer:
            return f"applies {shown}: the peer hold moves to {new}"
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
    absent: bool = False  # section 13: no peer hold is registered, and nothing registers one here

    def words(self) -> str:
        shown = command_text(self.command)
        if self.absent:
            return f"pops {shown}: no peer hold is registered here, so nothing moves"
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
            record.append(CompactIgnored(command, with_alias(cfg), s.standing[p]))
        return s
    i, f = cmd.index_of(command), command[-1]
    old = s.standing[p]
    if old == BOTTOM:  # no peer hold registered: with peer_reset = clear, this compaction registers it
        if cfg.peer_reset != "clear":
            if record is not None:
                record.append(CompactIgnored(command, with_alias(cfg), old, absent=True))
            return s
        new = f
    else:
        new = replace_at(old, i, f) if isinstance(old, tuple) else max(old, f)
    if record is not None:
        record.append(StandingRaised(p, command, (old, new), with_section_13(cfg)) if new != old
                      else CompactIgnored(command, with_alias(cfg), old))
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


@event
class PeerTaken(Event):
    """The interactive runtime of process p pops the index's create and records the peer: it
    registers the peer hold at `registered` where none is registered, else it takes over the
    hold at `taken` that the publisher registered; `standing` is (before, after)."""

    p: int
    a: int
    registered: int | None
    taken: int | None

    def words(self) -> str:
        if self.registered is not None:
            return f"records the index as a peer and registers the peer hold at {self.registered}"
        return f"records the index as a peer and takes over the peer hold at {self.taken}"

    def drawing(self) -> tuple:
        at = self.registered if self.registered is not None else self.taken
        verb = "registers" if self.registered is not None else "takes over"
        return (StepNote(lane(INTERACTIVE, self.p), f": peer, {verb} hold {at}"),)


def inter_create_index(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """CreateIndex(a) on the interactive runtime: record the peer. Where no peer hold is
    registered it registers its own at reg(p, a), with the current since; otherwise it takes
    over the registered hold (nothing beyond the pop)."""
    a, old = command[1], s.standing[p]
    if old != BOTTOM:
        if record is not None:
            record.append(PeerTaken(p, a, None, old))
        return s
    hold = registered_at(cfg, a, s.since[p])
    if record is not None:
        record.append(PeerTaken(p, a, hold, None))
    return s._replace(standing=replace_at(s.standing, p, hold))


def inter_hello(s: State, cfg, p: int, command, record: list | None = None) -> State:
    """Hello on the interactive runtime: reconciliation drops every registered reader (the new
    connection's history holds no peek that Reconnect forgot), with `reconcile = drop`; the
    peer hold is unregistered with `peer_reset = clear`."""
    readers = held(s.readers[p])
    after, cleared = s, None
    if cfg.reconcile == "drop" and readers:
        after = after._replace(readers=replace_at(after.readers, p, (None,) * len(s.readers[p])))
    if cfg.peer_reset == "clear" and s.standing[p] != BOTTOM:
        cleared = s.standing[p]
        after = after._replace(standing=replace_at(after.standing, p, BOTTOM))
    if record is not None:
        dropped = tuple(sorted(readers)) if cfg.reconcile == "drop" else ()
        kept = () if cfg.reconcile == "drop" else tuple(sorted(readers))
        record.append(Reconciled(INTERACTIVE, p, dropped, cleared, kept))
    return after


INTERACTIVE_EFFECTS = {
    CREATE: inter_create,
    DROP: inter_drop,
    COMPACT: inter_compact,
    RELEASE: inter_release,
    CREATE_INDEX: inter_create_index,
    HELLO: inter_hello,
}


# ------------------------------------------------------------ declarations


@attrs.frozen
class Action:
    """One action of the spec. `parameters(cfg)` lists its instances' arguments in
    enumeration order, each as (the label's arguments, the step function's keyword
    arguments); `footprint(cfg, p)` says what an instance on process p (None for a
    controller action) reads and writes. Its step takes `record` (a list, or None)
    and records there the events that narrate and draw it (protocol/model/events.py)."""

    name: str
    step: Callable  # (state, cfg, **arguments, record=None) -> next state or None
    parameters: Callable  # cfg -> [(label arguments, keyword arguments)]
    fair: bool  # a runtime action: weakly fair, per instance, when the configuration asks
    footprint: Callable  # (cfg, p) -> Footprint
    where: Callable = everywhere  # cfg -> whether the configuration has the action at all (model/where.py)
    # The design's TLA+ model (Holds.tla, version 4) names the action so, its arguments taken
    # from the label's by position (`CtlCreate({1})`: CreatePeek(d, t)'s t); None where that
    # model has no such action. Read only for a configuration that mirrors it (model/tla.py).
    tla: str | None = None
    # A fair action's reason for being disabled in a state, for a lasso's fairness notes:
    # (state, cfg, **the step's keyword arguments) -> the guard or bound that stops it.
    why_disabled: Callable | None = attrs.field(default=None, eq=False)
    # (cfg, state) -> the parameters that may be enabled in the state, in enumeration order, every
    # enabled one among them; None: any of `parameters(cfg)`. What narrates a state (explain,
    # validate's refusal, the explorer) lists these, not the constants' every instance.
    candidates: Callable | None = None

    def parameters_in(self, cfg, state) -> list:
        """The parameters of the instances that may be enabled in `state` (a superset of the enabled)."""
        return self.parameters(cfg) if self.candidates is None else self.candidates(cfg, state)


# ------------------------------------------------------------ parameters


def peek_times(cfg, ids=None):
    """CreatePeek(d, i, t), ordered by d, then i, then t; `CreatePeek(d, t)` with one index
    (of the peek ids `ids` only, if given)."""
    indexed = index_count(cfg) > 1
    return [((d, i, t) if indexed else (d, t), dict(d=d, t=t, i=i))
            for d in (range(cfg.D) if ids is None else ids) for i in range(index_count(cfg))
            for t in range(cfg.MaxTime + 1)]


def creatable(cfg, s: State):
    """The CreatePeek instances that may be enabled in s: ids are allocated in order, so those
    of the lowest unborn id alone (create_peek's guard)."""
    return peek_times(cfg, [d for d in [next((d for d, status in enumerate(s.df) if status == UNBORN), None)]
                            if d is not None])


def peeks(cfg):
    return [((d,), dict(d=d)) for d in range(cfg.D)]


def index_as_ofs(cfg):
    """CreateIndex(a) for each a increasing (spec 13.3)."""
    return [((a,), dict(a=a)) for a in range(cfg.MaxTime + 1)]


def index_ids(cfg):
    """AdvancePolicy(i) for each id in increasing order; `AdvancePolicy` with one index."""
    if index_count(cfg) == 1:
        return [((), {})]
    return [((i,), dict(i=i)) for i in range(index_count(cfg))]


def index_times(cfg):
    """AllowCompaction(i, t) for each id, then t increasing (t = 0 is never later than
    sent); `AllowCompaction(t)` with one index."""
    indexed = index_count(cfg) > 1
    return [((i, t) if indexed else (t,), dict(i=i, t=t))
            for i in range(index_count(cfg)) for t in range(1, cfg.MaxTime + 1)]


def reader_times(cfg, readers=None):
    """ReaderDowngrade(p, d, t), ordered by p, then d, then t (t = 0 is never above a
    registration); `ReaderDowngrade(p, t)` with one index and one peek id (of the (p, d)
    pairs `readers` only, if given)."""
    short = index_count(cfg) == 1 and cfg.D == 1
    pairs = ((p, d) for p in range(cfg.P) for d in range(cfg.D)) if readers is None else readers
    return [((p, t) if short else (p, d, t), dict(p=p, d=d, t=t)) for p, d in pairs for t in range(1, cfg.MaxTime + 1)]


def registered_readers(cfg, s: State):
    """The ReaderDowngrade instances that may be enabled in s: those of a registered reader
    (reader_downgrade's guard)."""
    return reader_times(cfg, [(p, d) for p in range(cfg.P) for d in range(cfg.D) if s.readers[p][d] is not None])


def nothing(cfg):
    return [((), {})]


def processes(cfg):
    return [((p,), dict(p=p)) for p in range(cfg.P)]


# ------------------------------------------------------------ footprints


# No controller command reads or writes the write frontier: only Ingest moves it. Validate
# then runs a command once for all the globals that differ only in `upper` (a silent Ingest
# leaves one per value); the engine checks the declaration as it goes.
UNREAD_BY_COMMANDS = ("upper",)


def controller(cfg, p) -> Footprint:
    return Footprint(CONTROLLER, untouched=UNREAD_BY_COMMANDS)


def local(cfg, p) -> Footprint:
    return Footprint(LOCAL)


def maint_step_footprint(cfg, p) -> Footprint:
    """Applying Export reads which index each reader's peek is on (ix): with `overwrite` to
    strand the readers of Y, with a seal to notify those parked, and to say whether the
    placeholder it backs had readers."""
    return Footprint(LOCAL, ("ix",)) if cfg.alias != "none" else Footprint(LOCAL)


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


# What no publisher or reclamation reads: the runtimes' queues. Runs that differ only in
# what is queued share one evaluation of these steps. A seal, a wake and a reader's
# downgrade read whether Export is still queued on maintenance (`exported`), never the
# interactive queue.
QUEUES = ("mq", "iq")
INTERACTIVE_QUEUE = ("iq",)


def reclaim_footprint(cfg, p) -> Footprint:
    return Footprint(LOCAL, untouched=QUEUES)


def publish_footprint(cfg, p) -> Footprint:
    """Physical compaction is bounded by upper, read through min(since, upper) with physical
    from since: every upper at or above the since it publishes gives the same step."""
    if cfg.physical == "from_since":
        return Footprint(LOCAL, ("upper",), QUEUES, ("upper", published_since))
    return Footprint(LOCAL, ("upper",), QUEUES)


def published_since(s: State, cfg, p: int) -> int:
    """The since Publish(p) leaves: the published one raised to the least hold, if any."""
    bound = publish_bound(s, cfg, p)
    if bound is None:
        return s.since[p]
    return bound if cfg.since_rule == "meet" else max(s.since[p], bound)


def seal_footprint(cfg, p) -> Footprint:
    """Sealing reads upper, and its notification which index each parked peek reads."""
    return Footprint(LOCAL, ("upper", "ix") if cfg.alias != "none" else ("upper",), INTERACTIVE_QUEUE)


def wake_footprint(cfg, p) -> Footprint:
    """Waking reads each parked peek's as_of (and index)."""
    return Footprint(LOCAL, ("as_of", "ix") if cfg.alias != "none" else ("as_of",), INTERACTIVE_QUEUE)


def ingest_footprint(cfg, p) -> Footprint:
    """With a tap, Ingest notifies every process of what it has parked: each process's
    notification reads the globals and that process's locals alone. Without one it reads
    and writes `upper` alone."""
    if cfg.seal == "tap":
        return Footprint(EACH)
    return Footprint(CONTROLLER, untouched=tuple(name for name in schema.GLOBAL_VARIABLES if name != "upper"))


def reader_downgrade_footprint(cfg, p) -> Footprint:
    """Downgrading reads p's locals and, with an alias, which index the peek reads (backed)."""
    return Footprint(LOCAL, ("ix",) if cfg.alias != "none" else (), INTERACTIVE_QUEUE)


# ------------------------------------------------------------ the actions

def create_peek_footprint(cfg, p) -> Footprint:
    """With the design's silent reconnection, a create clears every process's `drop_applied`:
    each process's locals are rewritten alike, by what the globals say (spec 12.6)."""
    return Footprint(EACH) if with_silent_hello(cfg) else controller(cfg, p)


def with_any_reconnect(cfg) -> bool:
    """Section 10's reconnection (the cap's), or section 13's and 12.6's (E >= 1)."""
    return with_reconnect(cfg) or with_reconnections(cfg)


ACTIONS = (
    # Section 13: the controller creates the index in the stream, before any peek.
    Action("CreateIndex", create_index, index_as_ofs, False, controller, where=with_created_index),
    Action("CreatePeek", create_peek, peek_times, False, create_peek_footprint, tla="CtlCreate({1})",
           candidates=creatable),
    Action("DropPeek", drop_peek, peeks, False, controller, tla="CtlDrop"),
    Action("AdvancePolicy", advance_policy, index_ids, False, controller, where=with_policy),
    # Section 12: a free controller allows compaction in one command, in AdvancePolicy's place.
    Action("AllowCompaction", allow_compaction, index_times, False, controller, where=with_free_controller,
           tla="CtlCompact({0})"),
    Action("Ingest", ingest, nothing, False, ingest_footprint, where=with_ingest),
    Action("Reconnect", reconnect, nothing, False, controller, where=with_any_reconnect, tla="Hello"),
    Action("MaintStep", maint_step, processes, True, maint_step_footprint, tla="MaintStep({0})",
           why_disabled=maint_step_idle),
    Action("InterStep", inter_step, processes, True, inter_step_footprint, tla="InterStep({0})",
           why_disabled=inter_step_idle),
    # Without acquisition nothing is ever released to reclaim.
    Action("Reclaim", reclaim, processes, True, reclaim_footprint, where=with_acquisition,
           why_disabled=reclaim_idle),
    Action("Publish", publish, processes, True, publish_footprint, tla="MaintRefresh({0})",
           why_disabled=publish_idle),
    Action("Seal", seal, processes, True, seal_footprint, where=with_seal, why_disabled=seal_idle),
    Action("Wake", wake, processes, True, wake_footprint, where=with_seal, why_disabled=wake_idle),
    # Never fair: a reader may stop making progress. After every other instance (spec 12.3).
    Action("ReaderDowngrade", reader_downgrade, reader_times, False, reader_downgrade_footprint,
           where=with_reader_downgrade, tla="ReaderDowngrade({0}, {1})", candidates=registered_readers),
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
