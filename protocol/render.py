"""Rendering: the only module that imports rich. Knows nothing of the search.

It draws a `CheckResult` summary and a `Trace`, always through `Text` so
that queues printed as `[Create(0, 0)]` are not taken for markup.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from .state import DF_NAMES, GLOBAL_VARIABLES, PROCESS_VARIABLES
from .trace import Trace, changes

VERDICT_STYLE = {True: "green", False: "red", None: "yellow"}


def console_for(file=None, width: int | None = None) -> Console:
    """A console that writes no ANSI codes when its output is not a terminal."""
    return Console(file=file, width=width, highlight=False, soft_wrap=False)


# ------------------------------------------------------------------ values


def command_text(command) -> str:
    kind, *args = command
    return f"{kind}({', '.join(map(str, args))})"


def value_text(variable: str, value) -> str:
    """A variable's value as a reader of the spec would write it."""
    if variable in ("mq", "iq"):
        return "[" + ", ".join(command_text(c) for c in value) + "]"
    if variable == "df":
        return "<" + ", ".join(DF_NAMES[v] for v in value) + ">"
    if variable in ("readers", "acq"):
        entries = [f"{d}: {t}" for d, t in enumerate(value) if t is not None]
        return "{" + ", ".join(entries) + "}"
    if variable in ("caps", "released"):
        return "{" + ", ".join(map(str, sorted(value))) + "}"
    if isinstance(value, tuple):
        return "<" + ", ".join(map(str, value)) + ">"
    return str(value)


def state_lines(state) -> list[str]:
    """Every variable of a state, one per line, per-process variables per process."""
    lines = [f"{name} = {value_text(name, getattr(state, name))}" for name in GLOBAL_VARIABLES]
    for name in PROCESS_VARIABLES:
        for p, value in enumerate(getattr(state, name)):
            lines.append(f"{name}[{p}] = {value_text(name, value)}")
    return lines


# ------------------------------------------------------------------ traces


def changes_text(before, after) -> Text:
    text = Text()
    for i, change in enumerate(changes(before, after)):
        if i:
            text.append("\n")
        text.append(f"{change.name} ", style="bold")
        text.append(value_text(change.variable, change.before), style="dim")
        text.append(" -> ")
        text.append(value_text(change.variable, change.after), style="bold yellow")
    return text


def trace_table(trace: Trace, full: bool = False, explain=None) -> Table:
    """One row per state: its number, the action that led to it, what it changed."""
    table = Table(box=box.SIMPLE_HEAD, show_lines=False, title_justify="left", expand=False)
    table.title = Text(f"Counterexample to {trace.prop}: {trace.length} states", style="bold red")
    table.add_column("#", justify="right", style="cyan", no_wrap=True)
    table.add_column("action", no_wrap=True)
    table.add_column("state" if full else "changed")
    previous = None
    for number, step in enumerate(trace.steps, start=1):
        action = Text("Initial state" if step.action is None else str(step.action), style="bold")
        if trace.loop is not None and number - 1 == trace.loop:
            action.append("\n<- cycle starts here", style="magenta")
        if full or previous is None:
            body = Text("\n".join(state_lines(step.state)))
        else:
            body = changes_text(previous, step.state)
        table.add_row(str(number), action, body)
        previous = step.state
    if trace.is_lasso:
        end = (f"stutters forever in state {trace.loop + 1}" if trace.stutters
               else f"back to state {trace.loop + 1}")
        table.add_row("", Text(end, style="magenta"), Text(""))
    for line in explain or ():
        table.caption = (table.caption or "") + line + "\n"
    for note in trace.notes:
        table.caption = (table.caption or "") + note + "\n"
    if table.caption:
        table.caption = Text(table.caption.rstrip("\n"), style="italic")
        table.caption_justify = "left"
    return table


# ----------------------------------------------------------------- summary


def verdict_text(verdict) -> Text:
    if verdict.holds is True:
        return Text("holds", style="green")
    if verdict.holds is False:
        return Text(f"violated ({verdict.trace_length} states)", style="red")
    return Text("unknown (search incomplete)", style="yellow")


def expectation_text(result, prop: str) -> Text:
    expected = result.named.expected_violation()
    if prop == expected:
        length = result.named.expected_length()
        return Text("violated" + (f" ({length} states)" if length else ""))
    return Text("holds")


def summary_table(result) -> Table:
    named, cfg = result.named, result.config
    table = Table(box=box.ROUNDED, show_header=False, title_justify="left")
    status = "as expected" if result.as_expected else "NOT as expected"
    table.title = Text.assemble(
        (named.name, "bold"), "  ", (status, "green" if result.as_expected else "bold red")
    )
    table.add_column("what", style="cyan", no_wrap=True)
    table.add_column("value")
    table.add_row("constants", Text(", ".join(f"{k}={v}" for k, v in cfg.constants.items())))
    table.add_row("switches", Text(", ".join(f"{k}={v}" for k, v in cfg.switches.items())))
    for label, value in result_counts(result):
        table.add_row(label, Text(value))
    if not result.complete:
        why = "interrupted" if result.interrupted else "cut short"
        table.add_row("search", Text(f"INCOMPLETE ({why}): no property is reported to hold",
                                     style="bold yellow"))
    props = Table(box=None, show_header=True, padding=(0, 2, 0, 0))
    props.add_column("property", style="bold")
    props.add_column("verdict")
    props.add_column("expected", style="dim")
    for prop, verdict in result.properties.items():
        props.add_row(prop, verdict_text(verdict), expectation_text(result, prop))
    table.add_row("properties", props)
    for line in result.mismatches():
        table.add_row("mismatch", Text(line, style="bold red"))
    return table


def result_counts(result) -> list[tuple[str, str]]:
    rows = [
        ("distinct states", f"{result.distinct_states:,}"),
        ("transitions", f"{result.transitions:,}"),
        ("depth", str(result.depth)),
        ("seconds", f"{result.seconds:.2f}"),
    ]
    return rows


def render_result(console: Console, result, show_traces: bool = True, full: bool = False,
                  explain=None) -> None:
    """The one-screen summary, then each counterexample found."""
    console.print(summary_table(result))
    if not show_traces:
        return
    for prop, verdict in result.properties.items():
        if verdict.trace is not None:
            lines = explain(verdict.trace) if explain else None
            console.print(trace_table(verdict.trace, full=full, explain=lines))


def render_totals(console: Console, results, seconds: float) -> None:
    table = Table(box=box.SIMPLE_HEAD, title=Text("check --all", style="bold"), title_justify="left")
    for column in ("configuration", "distinct states", "depth", "verdicts", "seconds", "status"):
        table.add_column(column, justify="right" if column in ("distinct states", "depth", "seconds") else "left")
    for result in results:
        verdicts = ", ".join(
            f"{p} {v.trace_length}" for p, v in result.properties.items() if v.holds is False
        ) or "all hold"
        table.add_row(
            result.named.name, f"{result.distinct_states:,}", str(result.depth), verdicts,
            f"{result.seconds:.2f}",
            Text("as expected", style="green") if result.as_expected else Text("NOT as expected", style="bold red"),
        )
    console.print(table)
    failed = sum(not r.as_expected for r in results)
    console.print(Text(f"{len(results)} configurations, {failed} not as expected, {seconds:.1f} s",
                       style="bold red" if failed else "bold green"))


class ProgressView:
    """A live progress line for a running search (only on a terminal)."""

    def __init__(self, console: Console, name: str):
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
            console=console, transient=True,
        )
        self.task = self.progress.add_task(name)
        self.name = name

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self.progress.__exit__(*exc)

    def update(self, p) -> None:
        rate = p.distinct_states / p.seconds if p.seconds > 0 else 0.0
        self.progress.update(
            self.task,
            description=f"{self.name}: {p.distinct_states:,} distinct states, depth {p.depth}, "
                        f"queue {p.queue:,}, {rate:,.0f} states/s",
        )
