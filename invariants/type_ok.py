"""TypeOK: every variable is in its domain (model-spec section 3)."""

from protocol.state import COMMAND_ARITY, DF_NAMES, UNBORN

MAINTENANCE_COMMANDS = {"Compact", "Acquire", "Release"}
INTERACTIVE_COMMANDS = {"Create", "Drop", "Compact", "Release"}


def _time(value, cfg) -> bool:
    return isinstance(value, int) and 0 <= value <= cfg.MaxTime


def _dataflow(value, cfg) -> bool:
    return isinstance(value, int) and 0 <= value < cfg.D


def _command_ok(command, allowed, cfg) -> bool:
    if not isinstance(command, tuple) or not command or command[0] not in allowed:
        return False
    if len(command) != COMMAND_ARITY[command[0]] + 1:
        return False
    kind, *args = command
    if kind == "Compact":
        return _time(args[0], cfg)
    if not _dataflow(args[0], cfg):
        return False
    return len(args) == 1 or _time(args[1], cfg)


def _partial_map_ok(m, cfg) -> bool:
    return len(m) == cfg.D and all(v is None or _time(v, cfg) for v in m)


def _problems(s, cfg):
    P, D = cfg.P, cfg.D
    for name in ("policy", "sent", "upper", "fwd"):
        if not _time(getattr(s, name), cfg):
            yield f"{name} = {getattr(s, name)!r} is not a time 0..{cfg.MaxTime}"
    if len(s.df) != D or any(v not in range(len(DF_NAMES)) for v in s.df):
        yield f"df = {s.df!r} is not a status per dataflow"
    if len(s.as_of) != D or not all(_time(t, cfg) for t in s.as_of):
        yield f"as_of = {s.as_of!r} is not a time per dataflow"
    elif any(s.df[d] == UNBORN and s.as_of[d] != 0 for d in range(D)):
        yield f"as_of = {s.as_of!r} is not 0 for an unborn dataflow"
    if not isinstance(s.caps, frozenset) or not all(_dataflow(d, cfg) for d in s.caps):
        yield f"caps = {s.caps!r} is not a set of dataflow ids"
    for name in ("mq", "iq", "writer", "standing", "since", "physical", "readers", "acq", "released"):
        if len(getattr(s, name)) != P:
            yield f"{name} has {len(getattr(s, name))} entries, not one per process (P = {P})"
            return
    for p in range(P):
        if not all(_command_ok(c, MAINTENANCE_COMMANDS, cfg) for c in s.mq[p]):
            yield f"mq[{p}] = {s.mq[p]!r} holds a command maintenance cannot receive"
        if not all(_command_ok(c, INTERACTIVE_COMMANDS, cfg) for c in s.iq[p]):
            yield f"iq[{p}] = {s.iq[p]!r} holds a command interactive cannot receive"
        for name in ("writer", "standing", "since", "physical"):
            if not _time(getattr(s, name)[p], cfg):
                yield f"{name}[{p}] = {getattr(s, name)[p]!r} is not a time 0..{cfg.MaxTime}"
        for name in ("readers", "acq"):
            if not _partial_map_ok(getattr(s, name)[p], cfg):
                yield f"{name}[{p}] = {getattr(s, name)[p]!r} is not a map dataflow -> time"
        released = s.released[p]
        if not isinstance(released, frozenset) or not all(_dataflow(d, cfg) for d in released):
            yield f"released[{p}] = {released!r} is not a set of dataflow ids"


def type_ok_witnesses(s, cfg) -> list[str]:
    return list(_problems(s, cfg))


def type_ok(s, cfg) -> bool:
    """Every variable is in its domain: times within 0..MaxTime, ids within 0..D-1,
    one entry per process, queues holding only the commands their runtime receives.

    A state outside its domain means the model itself is wrong, so every
    other verdict on it would be meaningless.
    """
    return next(_problems(s, cfg), None) is None
