"""The design's TLA+ model beside ours: which configurations mirror it, and its action names.

The design's own model (`Holds.tla`, version 4, in Materialize's
`doc/developer/design/20260720_two_runtime_compute/protocol-holds/`; docs/tla.md)
is one of ours exactly where section 12's abstractions are all on (a free
controller, readers that advance, no data), with one peek id, and with no
mechanism it cannot express. There its actions and ours correspond one for
one, and each of our actions declares its TLA+ name (`Action.tla` in
protocol/model/actions.py). Elsewhere a TLA+ name would name something the
design's model does not have, so it is refused.
"""

from __future__ import annotations

from protocol.model.config import SWITCHES

# The switches the design's model varies, as its `Mechanism` does (routed, broadcast,
# broadcast-standing), with its fairness (`FairSpec` or `Spec`) and its silent Hello.
VARIED = ("compaction", "standing_hold", "fairness", "hello")
# The switches it fixes, at the values section 12 gives them to mirror it.
FIXED = {"controller": "free", "reader_downgrade": True, "ingest": False}

NAMES = ("ours", "tla", "both")  # how a trace names its actions (`--names`)


def mirror_refusal(cfg) -> str | None:
    """Why `cfg` is not a configuration of the design's TLA+ model (one phrase), or None
    where it is one: then every action of ours has its TLA+ name."""
    for name, value in FIXED.items():
        if getattr(cfg, name) != value:
            return f"{name}={getattr(cfg, name)} (the design's model has {name}={value})"
    if cfg.D != 1:
        return f"D={cfg.D} (the design's model has one peek, D=1)"
    if getattr(cfg, "E", 0) >= 1 and cfg.hello != "silent":
        return f"hello={cfg.hello} with E={cfg.E} (the design's Hello queues nothing: hello=silent)"
    if cfg.compaction == "routed" and cfg.standing_hold:
        return "compaction=routed with standing_hold=True (a mechanism the design's model does not list)"
    for name, switch in SWITCHES.items():
        if name not in VARIED and name not in FIXED and getattr(cfg, name) != switch.default:
            return f"{name}={getattr(cfg, name)} (a mechanism the design's model does not have)"
    return None


def mirrors(cfg) -> bool:
    return mirror_refusal(cfg) is None


def design_name(label) -> str | None:
    """The TLA+ model's name for the action instance `label` of a mirroring configuration
    (`MaintRefresh(0)` for `Publish(0)`), or None where that model has no such action."""
    from protocol.model.actions import BY_NAME

    action = BY_NAME.get(label.name)
    if action is None or action.tla is None:
        return None
    return action.tla.format(*label.args)


def naming(cfg, names: str | None):
    """How a trace of `cfg` names an action instance: a function from a label to its text.

    `names` is "ours", "tla" (the design's names) or "both" (ours, then the design's in
    parentheses where it differs); None is "both" for a configuration that mirrors the
    design's model, "ours" elsewhere. "tla" and "both" elsewhere are a NamingError."""
    if names is None:
        names = "both" if mirrors(cfg) else "ours"
    if names not in NAMES:
        raise NamingError(f"--names {names}: give one of {', '.join(NAMES)}")
    if names == "ours":
        return str
    refusal = mirror_refusal(cfg)
    if refusal is not None:
        raise NamingError(f"--names {names}: this configuration has {refusal}, so its actions have no "
                          "TLA+ names; the Tla* configurations mirror it (`list`)")
    if names == "tla":
        return lambda label: design_name(label) or str(label)

    def both(label) -> str:
        theirs = design_name(label)
        return str(label) if theirs in (None, str(label)) else f"{label} (TLA+ {theirs})"

    return both


class NamingError(ValueError):
    """A TLA+ name asked for a configuration that does not mirror the design's model: one line."""


def mapping_table() -> str:
    """docs/tla.md's table of action names, from the declarations (`docs --write`)."""
    from protocol.model.actions import ACTIONS
    from protocol.configurations.named import lookup

    cfg = lookup("TlaHoldsReconnect").config  # has every action the design's model has
    rows = ["| ours | the design's TLA+ model (version 4) |", "|---|---|"]
    for action in ACTIONS:
        if action.tla is not None and action.where(cfg):
            names = parameter_names(action.parameters(cfg))
            ours = f"{action.name}({', '.join(names)})" if names else action.name
            rows.append(f"| `{ours}` | `{action.tla.format(*names)}` |")
    return "\n".join(rows) + "\n"


def parameter_names(parameters: list) -> list[str]:
    """The names of a label's arguments (`["d", "t"]` for CreatePeek(d, t)), read off its last
    instance, whose arguments are the largest: each argument is the first keyword argument of
    the step, not yet named, that has its value."""
    if not parameters:
        return []
    arguments, keywords = parameters[-1]
    names, left = [], dict(keywords)
    for value in arguments:
        name = next(name for name, given in left.items() if given == value)
        names.append(name)
        del left[name]
    return names
