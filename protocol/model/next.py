"""The engine's `Model` of a configuration: its action instances (from the
declarations in actions.py), its state layout, its properties and its fairness.

`Next` is a flat disjunction of action instances, enumerated in a fixed
order (the spec's order, arguments ascending), so the search always picks
the same shortest trace. Switches are read here, once per configuration.
"""

from __future__ import annotations

from functools import partial
from collections.abc import Mapping
from typing import Callable

from protocol import properties as props
from protocol.model import actions
from protocol.model.actions import Action
from protocol.engine import Instance, Label, Layout, Model
from protocol.engine.views import each_process
from protocol.model import state as schema
from protocol.model.state import initial
from protocol.model.trace import Step

__all__ = ["ACTIONS", "BY_NAME", "Action", "Label", "RUNTIME_ACTIONS", "action_instances", "fair_family", "instances",
           "model_for", "model_with", "replay", "successors_for"]


def instances(cfg) -> list[tuple[Label, Callable]]:
    """Every action instance of the configuration, in enumeration order: (label, step)."""
    return [(instance.label, instance.step) for instance in engine_instances(cfg)]


def engine_instances(cfg) -> list:
    return [instance for action in actions.ACTIONS if action.where(cfg) for instance in action_instances(cfg, action)]


def action_instances(cfg, action: Action, wanted=None) -> list:
    """The instances of one action, in enumeration order (only the labels in `wanted`, if given)."""
    found = []
    for label_args, keywords in action.parameters(cfg):
        label = Label(action.name, *label_args)
        if wanted is not None and label not in wanted:
            continue
        p = keywords.get("p")  # the process it acts on, whatever its fairness
        found.append(Instance(label, partial(action.step, cfg=cfg, **keywords), p,
                              action.footprint(cfg, p), fair_family(label) if cfg.fairness else None))
    return found


def instance_count(cfg) -> int:
    """len(instances(cfg)), without listing them: what a step of a random walk evaluates."""
    return sum(len(action.parameters(cfg)) for action in actions.ACTIONS if action.where(cfg))


def fair_family(label: Label) -> tuple | None:
    """The weak-fairness family an action instance belongs to, or None if it is never fair."""
    return tuple(label) if label.name in actions.RUNTIME_ACTIONS else None


def __getattr__(name: str):
    """ACTIONS, BY_NAME and RUNTIME_ACTIONS: the declarations of actions.py, as they are now."""
    if name in ("ACTIONS", "BY_NAME", "RUNTIME_ACTIONS"):
        return getattr(actions, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def symmetry_refusal(cfg) -> str | None:
    """Why the processes are not interchangeable, or None where they are."""
    return "has the cap, which makes process 0 special" if cfg.cap else None


def model_for(cfg) -> Model:
    """The engine's model of configuration `cfg`: initial state, instances, properties."""
    return model_with(cfg, engine_instances(cfg))


def model_with(cfg, table: list, lazy_liveness: bool = False) -> Model:
    """The model of `cfg` with only the action instances `table` (in enumeration order): what
    trace validation runs, listing the instances a log can reach, not every one of the constants'.
    With `lazy_liveness`, a liveness property's pairs are listed when first asked for (trace
    validation decides a family such as CompactionNotStalled's by its form, never listing it)."""
    bound = props.properties_for(cfg)
    liveness = {p.name: partial(p.check, cfg) for p in bound if p.kind == props.LIVENESS}
    layout = Layout(schema.State, schema.GLOBAL_VARIABLES, schema.PROCESS_VARIABLES)
    return Model(
        initial_states=[initial(cfg)],
        instances=table,
        layout=layout,
        processes=cfg.P,
        invariants={p.name: invariant_of(p, cfg, layout) for p in bound if p.kind == props.STATE},
        transition_properties={p.name: partial(p.check, cfg=cfg) for p in bound if p.kind == props.TRANSITION},
        by_component=frozenset(p.name for p in bound if p.by_component),
        by_pair=frozenset(p.name for p in bound if p.by_pair),
        pair_reads={p.name: p.pair_reads for p in bound if p.by_pair and p.pair_reads is not None},
        liveness=Listed(liveness) if lazy_liveness else {name: pairs() for name, pairs in liveness.items()},
        fair_families=[i.family for i in table if i.family is not None],
        symmetry_refusal=symmetry_refusal(cfg),
    )


def invariant_of(prop, cfg, layout: Layout) -> Callable:
    """A state invariant as the engines evaluate it: a per-process one on a view of each process's
    entries and of the globals it declares (engine/views.py), any other on the whole state."""
    if prop.per_process is None:
        return partial(prop.check, cfg=cfg)
    return each_process(partial(prop.per_process, cfg=cfg), layout, prop.pair_reads or (), cfg.P, prop.name)


class Listed(Mapping):
    """name -> the property's leads-to pairs, each list made when first asked for."""

    def __init__(self, makers: dict):
        self.makers, self.made = makers, {}

    def __getitem__(self, name: str) -> list:
        if name not in self.made:
            self.made[name] = self.makers[name]()
        return self.made[name]

    def __iter__(self):
        return iter(self.makers)

    def __len__(self) -> int:
        return len(self.makers)


def successors_for(cfg) -> Callable:
    """The successor function of `cfg`: state -> [(action instance, next state)]."""
    return model_for(cfg).successors


def replay(cfg, actions, successors=None) -> list[Step]:
    """Run the named action instances from the initial state; fail on a disabled one.

    `actions` are labels or their printed form ("Publish(1)"). Used to check
    that a stored trace is still a run of the model.
    """
    model = model_for(cfg)
    successors = successors or model.successors
    state = model.initial_states[0]
    steps = [Step(None, state)]
    for wanted in actions:
        options = {str(label): (label, after) for label, after in successors(state)}
        if str(wanted) not in options:
            enabled = ", ".join(options) or "nothing"
            raise ValueError(f"{wanted} is not enabled after step {len(steps) - 1}; enabled: {enabled}")
        label, state = options[str(wanted)]
        steps.append(Step(label, state))
    return steps
