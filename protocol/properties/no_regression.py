"""NoRegression: frontiers only move forward (every variable the schema marks as rising)."""

import operator

from protocol.model import state as schema
from protocol.model.state import BOTTOM, GLOBAL


# A hold's absence is no time (spec 13.4): a peer hold or an orphan registered (from ⊥) or
# cleared (to ⊥) is judged by PeerHeld and I1, not here. A writer entry may rise from ⊥, never fall to it.
HOLDS_THAT_MAY_GO = ("standing", "orphan")


def _fallen(name: str, before, after):
    """(where, old, new) for each entry of variable `name` that fell in the step."""
    variable = schema.BY_NAME[name]
    entries = variable.domain.entries
    old_value, new_value = getattr(before, name), getattr(after, name)
    if variable.scope == GLOBAL:
        pairs = [(name, old_value, new_value)]
    else:
        pairs = [(f"{name}[{p}]", o, n) for p, (o, n) in enumerate(zip(old_value, new_value))]
    for where, old, new in pairs:
        if old is None or old == new:
            continue
        for i, (o, n) in enumerate(zip(entries(old), entries(new))):
            if n < o and not (name in HOLDS_THAT_MAY_GO and BOTTOM in (o, n)):
                yield (where if isinstance(old, int) else f"{where}[{i}]", o, n)


def no_regression_witnesses(before, after, cfg=None) -> list[str]:
    return [f"{where} fell from {old} to {new}"
            for name in schema.RISING for where, old, new in _fallen(name, before, after)]


def no_regression(before, after, cfg=None) -> bool:
    """No step lowers a frontier: policy, sent, upper, fwd, and each process's
    since, physical, writer and standing hold (every index id's entry, where kept per id).

    A frontier that moved back would let a reader rely on a time the system
    already gave up, or undo a compaction that physically happened.
    """
    names, rising = _rising()
    old, new = rising(before), rising(after)
    if old == new:  # most steps move no frontier: one comparison of them all
        return True
    return not any(o != n and next(_fallen(name, before, after), None)
                   for name, o, n in zip(names, old, new))


_READER: tuple = (None, None, None)  # (the schema, its rising variables, a reader of their values in one tuple)


def _rising():
    variables, names, read = _READER
    if variables is not schema.VARIABLES:
        variables, names = schema.VARIABLES, schema.RISING
        read = operator.attrgetter(*names) if len(names) > 1 else (lambda s: (getattr(s, names[0]),))
        globals()["_READER"] = (variables, names, read)
    return names, read
