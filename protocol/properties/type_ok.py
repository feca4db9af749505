"""TypeOK: every variable is in its domain (model-spec sections 3 and 10.2).

Derived from the schema (`protocol.model.state.VARIABLES`): each variable's domain
checks its value; a variable the configuration does not have must be None.
"""

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
    for variable in schema.VARIABLES:  # the quick pass; `_problems` says what is wrong
        value, problem = getattr(s, variable.name), variable.domain.problem
        if not variable.where(cfg):
            values = (value,) if variable.scope == GLOBAL else value
            if not isinstance(values, tuple) or any(v is not None for v in values):
                return False
        elif variable.scope == GLOBAL:
            if problem(value, cfg) is not None:
                return False
        elif not isinstance(value, tuple) or len(value) != cfg.P or any(problem(v, cfg) for v in value):
            return False
    return not any(status == UNBORN and t != 0 for status, t in zip(s.df, s.as_of))
