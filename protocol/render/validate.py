"""Rendering of trace validation (`validate`): the verdict, the behaviour, the mismatch.

rich lives only in the render modules; the behaviour is drawn by
`render.trace_table`, exactly as `check` draws a counterexample.
"""

from __future__ import annotations

import sys
import time

from rich import box
from rich.table import Table
from rich.text import Text

from protocol.tools.log import Observation
from protocol.render.narrate import narrate, runs_elided, state_lines, value_text
from protocol.render.terminal import trace_table
from protocol.model.trace import Trace
from protocol.tools.validate import Validation, differing


def render_validation(console, result: Validation, path: str, full: bool = False) -> None:
    console.print(validation_table(result, path))
    if result.mismatch is not None:
        render_mismatch(console, result, full)
    elif result.violations:
        for name in result.violations:
            console.print(behaviour_table(result, name, full))


def validation_table(result: Validation, path: str) -> Table:
    ok = result.is_behaviour and not result.violations
    verdict = ("a behaviour of the model" if result.is_behaviour
               else f"NOT a behaviour of the model: refused at {result.mismatch.where}")
    table = Table(box=box.ROUNDED, show_header=False, title_justify="left")
    table.title = Text.assemble((path, "bold"), "  against ", (result.log.design_name, "bold"), "  ",
                                (verdict, "green" if ok else "bold red"))
    table.add_column("what", style="cyan", no_wrap=True)
    table.add_column("value")
    cfg = result.cfg
    steps = sum(1 for e in result.log.events if not isinstance(e, Observation))
    rows = [
        ("constants", ", ".join(f"{k}={v}" for k, v in cfg.constants.items())),
        ("switches", ", ".join(f"{k}={v}" for k, v in cfg.switches.items())),
        ("silent", ", ".join(result.log.silent) or "none: every action is logged"),
        ("events", f"{result.events:,} ({steps:,} steps, {result.events - steps:,} observations); "
                   f"{result.matched:,} matched"),
    ]
    if result.is_behaviour:
        rows.append(("states at the end", f"{result.final_states:,} fit the log"))
    for what, value in rows:
        table.add_row(what, Text(value))
    table.add_row("properties", properties_cell(result))
    for note in result.notes:
        table.add_row("note", Text(note, style="italic"))
    return table


def properties_cell(result: Validation):
    if not result.is_behaviour:
        return Text("not judged: the log is not a behaviour", style="yellow")
    if not result.violations and not result.possible:
        return Text("none violated", style="green")
    cell = Table.grid(padding=(0, 2, 0, 0))
    for name, event in result.violations.items():
        cell.add_row(Text(name, style="bold"), Text(f"violated at event {event}", style="red"))
    for name, event in result.possible.items():
        cell.add_row(Text(name, style="bold"),
                     Text(f"violated by some fitting behaviours (from event {event}), not by all", style="yellow"))
    return cell


def behaviour_table(result: Validation, name: str, full: bool) -> Table:
    steps = result.behaviour[:result.at_state[name] + 1]
    table = trace_table(Trace(name, steps), full=full, cfg=result.cfg)
    table.title = Text(f"The recorded run violates {name} at event {result.violations[name]}: "
                       f"{len(steps)} states (silent steps included)", style="bold red")
    if name not in result.liveness:  # the trace table names a safety property's witnesses itself
        return table
    for line in result.witnesses[name]:
        table.add_row("", Text(f"\u2717 {name}: {line}", style="bold red"))
    return table


def render_mismatch(console, result: Validation, full: bool) -> None:
    mismatch = result.mismatch
    if len(result.behaviour) > 1:
        table = trace_table(Trace("", result.behaviour), full=full, cfg=result.cfg)
        table.title = Text(f"What the model did up to {mismatch.where} (silent steps included)", style="bold")
        console.print(table)
    console.print(candidates_table(result))
    console.print(Text(f"\u2717 {mismatch.where} (event {mismatch.event}): {mismatch.reason}", style="bold red"))


def candidates_table(result: Validation) -> Table:
    """The states the model could be in just before the mismatch: all of them where there is one,
    else how many, and the nearest few (`Mismatch.candidates`), each with where it differs."""
    mismatch = result.mismatch
    candidates = mismatch.candidates
    table = Table(box=box.SIMPLE_HEAD, title_justify="left")
    if mismatch.states == 1:
        table.title = Text(f"The state the model is in just before {mismatch.where}", style="bold")
        table.add_column("variables")
        table.add_column("enabled actions, in protocol words")
        table.add_row(Text("\n".join(state_lines(candidates[0], elide=True))), enabled_text(result, 0))
        return table
    among = differing(candidates) if len(candidates) > 1 else []
    table.title = Text(candidates_title(mismatch, among), style="bold")
    table.add_column("#", justify="right", style="cyan")
    table.add_column("where they differ" + (", and from the observation" if mismatch.kind == "observation" else ""))
    table.add_column("enabled actions, in protocol words")
    for index, state in enumerate(candidates):
        lines = [f"{name} = {entry_text(state, name)}" for name in among]
        if mismatch.kind == "observation":
            lines += [f"{name} = {entry_text(state, name)}, observed {observed}"
                      for name, observed in mismatch.differences[index] if name not in among]
        table.add_row(str(index + 1), Text("\n".join(lines)), enabled_text(result, index))
    return table


def candidates_title(mismatch, among: list) -> str:
    count, shown = mismatch.states, len(mismatch.candidates)
    title = f"The {count:,} states the model could be in just before {mismatch.where}"
    if shown < count:
        title += f"; the {shown} nearest to the observation" if mismatch.kind == "observation" else f"; {shown} of them"
    return title + (f"; they differ in {', '.join(among)}" if among else "")


def entry_text(state, key: str) -> str:
    name, _, rest = key.partition("[")
    value = getattr(state, name)
    return runs_elided(value_text(name, value[int(rest[:-1])] if rest else value))


# A refusal narrates the first few enabled instances of each action and counts the rest: a fresh
# state at MaxTime = 1000 enables 1,001 creates, and narrating each would cost as much as the constants.
SHOWN_PER_ACTION = 3


def enabled_text(result: Validation, index: int) -> Text:
    state = result.mismatch.candidates[index]
    by_action: dict = {}
    for label, after in result.mismatch.enabled[index]:
        by_action.setdefault(label.name, []).append((label, after))
    lines = []
    for name, steps in by_action.items():
        lines += [f"{label}: {narrate(label, state, after, result.cfg)}" for label, after in steps[:SHOWN_PER_ACTION]]
        if len(steps) > SHOWN_PER_ACTION:
            lines.append(f"\u2026 and {len(steps) - SHOWN_PER_ACTION:,} more {name} instances, "
                         f"{steps[SHOWN_PER_ACTION][0]} to {steps[-1][0]}")
    return Text("\n".join(lines) or "nothing is enabled")


class Progress:
    """A progress line on standard error while `validate` follows a long log: rewritten in place
    on a terminal once the run has taken a second, printed every ten seconds elsewhere once it
    has taken five; never on a short run. Cleared when the run ends, however it ends."""

    def __init__(self, path: str, stream=None, clock=time.monotonic):
        self.path, self.stream, self.clock = path, stream or sys.stderr, clock
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = clock()
        self.next = self.start + (1 if self.terminal else 5)
        self.shown = False

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *_) -> None:
        if self.shown and self.terminal:
            self._write("\r\x1b[K")

    def update(self, event: int, events: int, states: int) -> None:
        now = self.clock()
        if now < self.next:
            return
        self.next = now + (0.5 if self.terminal else 10)
        line = (f"validate {self.path}: event {event:,} of {events:,}, {states:,} states fit, "
                f"{now - self.start:.0f} s")
        self._write(f"\r\x1b[K{line}" if self.terminal else f"{line}\n")
        self.shown = True

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr: the progress is not worth failing for
            self.shown = False
