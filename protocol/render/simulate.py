"""Rendering of random simulations (rich lives only in the render modules).

The traces themselves are drawn by `render.trace_table`, exactly as `check`
draws them.
"""

from __future__ import annotations

from contextlib import contextmanager

from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from protocol.render.terminal import NESTED_WIDTH, one_line_description, trace_table, with_nested
from protocol.tools.simulate import SimulationResult


def render_simulation(console, result: SimulationResult, full: bool = False) -> None:
    console.print(simulation_table(result, console.width))
    for finding in result.findings.values():
        console.print(trace_table(finding.trace, full=full, cfg=result.config))


def simulation_table(result: SimulationResult, width: int | None = None):
    """The summary of a simulation (a Group, the properties under the box, below 80 columns)."""
    cfg, ok = result.config, result.as_expected
    table = Table(box=box.ROUNDED, show_header=False, title_justify="left")
    table.title = Text.assemble((result.named.name, "bold"), "  simulate  ",
                                ("as expected" if ok else "NOT as expected", "green" if ok else "bold red"))
    table.add_column("what", style="cyan", no_wrap=True)
    table.add_column("value")
    rows = [
        ("constants", ", ".join(f"{k}={v}" for k, v in cfg.constants.items())),
        ("switches", ", ".join(f"{k}={v}" for k, v in cfg.switches.items())),
        ("walks", f"{result.walks_run:,} of {result.walks:,} run, each at most {result.depth:,} states, "
                  f"seed {result.seed}"),
        ("steps", f"{result.steps:,}"),
        ("distinct states", f"{result.distinct_states:,} visited"),
        ("seconds", f"{result.seconds:.2f}"),
    ]
    for what, value in rows:
        table.add_row(what, Text(value))
    narrow = width is not None and width < NESTED_WIDTH
    if not narrow:
        table.add_row("properties", properties_table(result))
    for line in result.mismatches():
        table.add_row("mismatch", Text(line, style="bold red"))
    return with_nested(table, [("properties", properties_table(result))], width) if narrow else table


def properties_table(result: SimulationResult):
    expected = result.named.expected_violations()
    props = Table(box=None, show_header=True, padding=(0, 2, 0, 0))
    for column in ("property", "walks found", "expected"):
        props.add_column(column, style="bold" if column == "property" else None)
    for name in result.properties:
        finding = result.findings.get(name)
        verdict = (Text(f"violated ({finding.trace.length} states; {finding.walks:,} walks, "
                        f"first walk {finding.first_walk:,})", style="red") if finding
                   else Text("not violated", style="green"))
        props.add_row(name, verdict, Text("violated" if name in expected else "not violated", style="dim"))
    return props


@contextmanager
def walk_progress_bar(console, name: str, walks: int):
    """A progress bar over the walks (only on a terminal); yields the `on_progress` callback."""

    columns = (one_line_description(), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[violations]} violating"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(f"{name}: walks", total=walks, violations=0)
        yield lambda p: progress.update(task, completed=p.walks_done, violations=p.violations)
