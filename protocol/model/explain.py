"""The events of one step: the step re-run with a recorder.

The search runs every action without a recorder; narration and drawing ask
here what a step did. A step is re-run from the state before it under its
configuration, and the events its action and effects record
(protocol/model/events.py) are what the step is said and drawn with.
"""

from __future__ import annotations

from protocol.model import actions


def action_name(label) -> tuple[str, tuple]:
    """A label's name and arguments, whether a Label, a plain tuple or its printed form."""
    if isinstance(label, tuple):
        return label[0], tuple(label[1:])
    return str(label), ()


def explain(cfg, label, before, after=None) -> tuple:
    """The events the step `before --label--> after` records under `cfg`; () for a label
    that names no action instance of the configuration, or a step that, re-run, does not
    lead to `after` (a hand-made or sabotaged trace: its events would tell another step)."""
    name, args = action_name(label)
    for action in actions.ACTIONS:  # read when called: a test may declare more
        if action.name != name or not action.where(cfg):
            continue
        for label_args, keywords in action.parameters_in(cfg, before):  # those that may be enabled there
            if tuple(label_args) == args:
                record: list = []
                again = action.step(before, cfg=cfg, record=record, **keywords)
                return tuple(record) if after is None or again == after else ()
    return ()
