"""The actions of model-spec section 4: one pure function each, guard first.

Every action takes the state, the configuration and its arguments, and
returns the successor state, or None where its guard does not hold. No
action is a self-loop: an enabled action always changes the state.
"""

from __future__ import annotations

from .state import (
    ACQUIRE, COMPACT, CREATE, DROP, DROPPED, LIVE, RELEASE, UNBORN,
    State, append_all, ctl_since, held, replace_at,
)

# ---------------------------------------------------------------- controller


def create_peek(s: State, cfg, d: int, t: int) -> State | None:
    """CreatePeek(d, t): the controller creates peek d reading at as_of t."""
    if s.df[d] != UNBORN or UNBORN in s.df[:d]:
        return None  # ids are allocated in order: d must be the lowest unborn
    if not ctl_since(s) <= t <= cfg.MaxTime:
        return None
    mq, iq, caps = s.mq, append_all(s.iq, (CREATE, d, t)), s.caps
    if cfg.acquire != "none":
        mq = append_all(mq, (ACQUIRE, d, t))
    if cfg.cap:
        caps = caps | {d}
    return s._replace(
        df=replace_at(s.df, d, LIVE), as_of=replace_at(s.as_of, d, t), mq=mq, iq=iq, caps=caps
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
    return compact(s._replace(df=replace_at(s.df, d, DROPPED), iq=iq, mq=mq), cfg)


def advance_policy(s: State, cfg) -> State | None:
    """AdvancePolicy: the controller's own compaction policy moves one time on."""
    if s.policy >= cfg.MaxTime:
        return None
    return compact(s._replace(policy=s.policy + 1), cfg)


def ingest(s: State, cfg) -> State | None:
    """Ingest: new data advances the index's write frontier."""
    if s.upper >= cfg.MaxTime:
        return None
    return s._replace(upper=s.upper + 1)


def compact(s: State, cfg) -> State:
    """Compact (part of a step): issue AllowCompaction if the read frontier rose."""
    frontier = ctl_since(s)
    if frontier <= s.sent:
        return s
    s = s._replace(sent=frontier)
    if cfg.cap:
        return forward(s, cfg)
    command = (COMPACT, frontier)
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
    command, rest = s.mq[p][0], s.mq[p][1:]
    s = s._replace(mq=replace_at(s.mq, p, rest))
    kind = command[0]
    if kind == COMPACT:
        return s._replace(writer=replace_at(s.writer, p, command[1]))
    if kind == ACQUIRE:
        _, d, t = command
        if d in s.released[p]:  # the release overtook the acquisition: consume it
            return s._replace(released=replace_at(s.released, p, s.released[p] - {d}))
        return s._replace(acq=replace_at(s.acq, p, replace_at(s.acq[p], d, t)))
    if kind == RELEASE:
        d = command[1]
        if s.acq[p][d] is not None:
            return s._replace(acq=replace_at(s.acq, p, replace_at(s.acq[p], d, None)))
        return s._replace(released=replace_at(s.released, p, s.released[p] | {d}))
    raise ValueError(f"maintenance runtime cannot apply {command!r}")


def inter_step(s: State, cfg, p: int) -> State | None:
    """InterStep(p): process p's interactive runtime applies its next command."""
    if not s.iq[p]:
        return None
    command, rest = s.iq[p][0], s.iq[p][1:]
    s = s._replace(iq=replace_at(s.iq, p, rest))
    kind = command[0]
    if kind == CREATE:
        _, d, t = command
        s = s._replace(readers=replace_at(s.readers, p, replace_at(s.readers[p], d, t)))
        if cfg.cap and p == 0:  # process 0's frontier report retires the cap
            s = forward(s._replace(caps=s.caps - {d}), cfg)
        return s
    if kind == DROP:
        d = command[1]
        return s._replace(readers=replace_at(s.readers, p, replace_at(s.readers[p], d, None)))
    if kind == COMPACT:
        if cfg.standing_hold:
            return s._replace(standing=replace_at(s.standing, p, command[1]))
        return s
    if kind == RELEASE:
        d = command[1]
        return s._replace(released=replace_at(s.released, p, s.released[p] | {d}))
    raise ValueError(f"interactive runtime cannot apply {command!r}")


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


def publish(s: State, cfg, p: int) -> State | None:
    """Publish(p): process p's publisher raises since and physical compaction to its bound."""
    holds = [s.writer[p]]
    if cfg.standing_hold:
        holds.append(s.standing[p])
    holds += held(s.readers[p]).values()
    holds += held(s.acq[p]).values()
    since = max(s.since[p], min(holds))
    if cfg.physical == "from_since":
        physical = max(s.physical[p], min(since, s.upper))
    else:
        physical = max(s.physical[p], s.upper)
    if (since, physical) == (s.since[p], s.physical[p]):
        return None
    return s._replace(
        since=replace_at(s.since, p, since), physical=replace_at(s.physical, p, physical)
    )
