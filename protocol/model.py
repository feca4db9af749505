"""The next-state relation: which action instances exist for a configuration.

`Next` is a flat disjunction of action instances, enumerated in a fixed
order (the spec's order, arguments ascending), so the search always picks
the same shortest trace. Switches are read here, once per configuration.
"""

from __future__ import annotations

from functools import partial
from typing import Callable, Iterator, NamedTuple

from . import actions
from .state import State, initial

# Action names as TLA+ would write them, mapped to their functions.
ACTIONS = {
    "CreatePeek": actions.create_peek,
    "DropPeek": actions.drop_peek,
    "AdvancePolicy": actions.advance_policy,
    "Ingest": actions.ingest,
    "MaintStep": actions.maint_step,
    "InterStep": actions.inter_step,
    "Reclaim": actions.reclaim,
    "Publish": actions.publish,
}
# The runtime actions, weakly fair per process when the configuration asks for fairness.
RUNTIME_ACTIONS = ("MaintStep", "InterStep", "Reclaim", "Publish")


class Label(tuple):
    """An action instance: its name and arguments, printed as TLA+ would: `Publish(1)`."""

    def __new__(cls, name: str, *args: int):
        return super().__new__(cls, (name, *args))

    @property
    def name(self) -> str:
        return self[0]

    @property
    def args(self) -> tuple:
        return self[1:]

    def __str__(self) -> str:
        if not self.args:
            return self.name
        return f"{self.name}({', '.join(map(str, self.args))})"

    __repr__ = __str__


def instances(cfg) -> list[tuple[Label, Callable[[State], State | None]]]:
    """Every action instance of the configuration, in enumeration order."""
    found = []
    for d in range(cfg.D):
        for t in range(cfg.MaxTime + 1):
            found.append((Label("CreatePeek", d, t), partial(actions.create_peek, cfg=cfg, d=d, t=t)))
    for d in range(cfg.D):
        found.append((Label("DropPeek", d), partial(actions.drop_peek, cfg=cfg, d=d)))
    found.append((Label("AdvancePolicy"), partial(actions.advance_policy, cfg=cfg)))
    found.append((Label("Ingest"), partial(actions.ingest, cfg=cfg)))
    runtime = ["MaintStep", "InterStep", "Publish"]
    if cfg.acquire != "none":  # without acquisition nothing is ever released to reclaim
        runtime.insert(2, "Reclaim")
    for name in runtime:
        for p in range(cfg.P):
            found.append((Label(name, p), partial(ACTIONS[name], cfg=cfg, p=p)))
    return found


def instance_count(cfg) -> int:
    """len(instances(cfg)), without listing them: what a step of a random walk evaluates."""
    runtime = 3 + (cfg.acquire != "none")
    return cfg.D * (cfg.MaxTime + 1) + cfg.D + 2 + runtime * cfg.P


def fair_family(label: Label) -> tuple | None:
    """The weak-fairness family an action instance belongs to, or None if it is never fair."""
    return tuple(label) if label.name in RUNTIME_ACTIONS else None


class Model(NamedTuple):
    """What the checker needs: initial states and a successor function."""

    cfg: object
    initial_states: list
    successors: Callable[[State], Iterator[tuple[Label, State]]]
    labels: list


def successors_for(cfg, table: list | None = None) -> Callable[[State], list[tuple[Label, State]]]:
    """The successor function of `cfg`: state -> [(action instance, next state)]."""
    table = table if table is not None else instances(cfg)

    def successors(s: State) -> list[tuple[Label, State]]:
        out = []
        for label, step in table:
            t = step(s)
            if t is not None:
                out.append((label, t))
        return out

    return successors


def model_for(cfg) -> Model:
    table = instances(cfg)
    return Model(cfg, [initial(cfg)], successors_for(cfg, table), [label for label, _ in table])
