"""TypeOK: every variable is in its domain (model-spec sections 3 and 10.2).

Derived from the schema (`protocol.model.state.VARIABLES`): each variable's domain
checks its value; a variable the configuration does not have must be None.
"""

import operator
from typing import Callable

from protocol.model import state as schema
from protocol.model.state import GLOBAL, UNBORN


def _variable_problems(s, variable, cfg):
    value = getattr(s, variable.name)
    if variable.scope == GLOBAL:
        values = {variable.name: value}
    elif not isinstance(value, tuple) or len(value) != cfg.P:
        yield f"{variable.name} has {len(value) if isinstance(value, tuple) else 'no'} entries, " \
              f"not one per process (P = {cfg.P})"
        return
    else:
        values = {f"{variable.name}[{p}]": v for p, v in enumerate(value)}
    for name, v in values.items():
        if not variable.where(cfg):
            if v is not None:
                yield f"{name} = {v!r}, but this configuration has no {variable.name}"
            continue
        problem = variable.domain.problem(v, cfg)
        if problem:
            yield f"{name} = {v!r} {problem}"


def _problems(s, cfg):
    for variable in schema.VARIABLES:
        found = list(_variable_problems(s, variable, cfg))
        yield from found
        if found and variable.scope != GLOBAL and "entries" in found[0]:
            return  # the state does not even have one entry per process
    if isinstance(s.df, tuple) and isinstance(s.as_of, tuple):
        if any(status == UNBORN and t != 0 for status, t in zip(s.df, s.as_of)):
            yield f"as_of = {s.as_of!r} is not 0 for an unborn peek"


def type_ok_witnesses(s, cfg) -> list[str]:
    return list(_problems(s, cfg))


def type_ok(s, cfg) -> bool:
    """Every variable is in its domain: times within 0..MaxTime, ids within range,
    one entry per process, queues holding only the commands their runtime receives.

    A state outside its domain means the model itself is wrong, so every
    other verdict on it would be meaningless.
    """
    read, checks, unborn_ok = _quick_checks(cfg)
    for value, (accepts, problem) in zip(read(s), checks):
        if not accepts(value) and problem(value):
            return False
    return unborn_ok(s.df, s.as_of)


# The checks of the last configuration (and schema) asked about: a search asks about one
# configuration millions of times, so each domain's bounds are read from it once.
_LAST: tuple = (None, None, None)


def _quick_checks(cfg) -> tuple:
    """(the variables' values of a state, in schema order; per variable, a quick test and the
    exact one; the test that an unborn peek's as_of is 0): the quick test never accepts a
    value the exact one refuses. The quick tests remember the values they accepted."""
    variables, last_cfg, checks = _LAST
    if variables is not schema.VARIABLES or last_cfg is not cfg:
        checks = _build_checks(schema.VARIABLES, cfg)
        globals()["_LAST"] = (schema.VARIABLES, cfg, checks)
    return checks


def _build_checks(variables, cfg) -> tuple:
    names = [variable.name for variable in variables]
    read = operator.attrgetter(*names) if len(names) > 1 else (lambda s: (getattr(s, names[0]),))
    return read, tuple(_checks(variable, cfg) for variable in variables), _remembered_pairs(_unborn_ok)


def _unborn_ok(df, as_of) -> bool:
    return not any(status == UNBORN and t != 0 for status, t in zip(df, as_of))


# How many values a quick test remembers having accepted (past it, it starts again): the
# states a search checks share most of their values with the last ones it checked.
REMEMBERED = 4096
_UNSEEN = object()  # what `seen` answers for a value not in it (None is a value)


def _remembered(accepts: Callable) -> Callable:
    """`accepts`, answering at once for a value it accepted before. Remembered by identity, not
    equality: (True,) equals (1,), and TypeOK refuses the first. Each value is held while
    remembered, so no other value can take its id meanwhile; values are immutable."""
    seen: dict = {}  # id -> the value accepted

    def remembering(value) -> bool:
        if seen.get(id(value), _UNSEEN) is value:
            return True
        return bool(accepts(value)) and _kept(seen, id(value), value)

    return remembering


def _remembered_pairs(accepts: Callable) -> Callable:
    """As `_remembered`, for a test of two values at once."""
    seen: dict = {}  # (id, id) -> the pair accepted

    def remembering(first, second) -> bool:
        pair = seen.get((id(first), id(second)))
        if pair is not None and pair[0] is first and pair[1] is second:
            return True
        return bool(accepts(first, second)) and _kept(seen, (id(first), id(second)), (first, second))

    return remembering


def _kept(seen: dict, key, held) -> bool:
    """`held` remembered under `key` (the memory starting again past REMEMBERED entries); True."""
    if len(seen) >= REMEMBERED:
        seen.clear()
    seen[key] = held
    return True


def _checks(variable, cfg) -> tuple:
    """(quick test, exact test) of a variable's whole value; the exact one says whether it fails."""
    exact = lambda value: not _variable_ok(value, variable, cfg)  # noqa: E731
    if not variable.where(cfg):
        if variable.scope == GLOBAL:
            return (lambda value: value is None), exact
        absent = (None,) * cfg.P
        return (lambda value: type(value) is tuple and value == absent), exact
    quick = getattr(variable.domain, "accepts", None)
    entry_ok = _remembered(quick(cfg) if quick is not None else (lambda value: variable.domain.problem(value, cfg) is None))
    if variable.scope == GLOBAL:
        return entry_ok, exact
    P = cfg.P
    return (lambda value: type(value) is tuple and len(value) == P and all(map(entry_ok, value))), exact


def _variable_ok(value, variable, cfg) -> bool:
    """TypeOK on one variable, as the spec says it (the quick tests are checked against this)."""
    problem = variable.domain.problem
    if not variable.where(cfg):
        values = (value,) if variable.scope == GLOBAL else value
        return isinstance(values, tuple) and all(v is None for v in values)
    if variable.scope == GLOBAL:
        return problem(value, cfg) is None
    return isinstance(value, tuple) and len(value) == cfg.P and not any(problem(v, cfg) for v in value)
