"""Rendering of `generate`'s coverage report (rich lives only in the render modules)."""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from protocol.tools.generate import Coverage


def render_coverage(console, coverage: Coverage, directory: str, files: list) -> None:
    console.print(runs_table(coverage, directory, files))
    console.print(targets_table(coverage, files))


def runs_table(coverage: Coverage, directory: str, files: list) -> Table:
    cfg = coverage.named.config
    table = Table(box=box.ROUNDED, title_justify="left")
    table.title = Text.assemble((coverage.named.name, "bold"), "  generate  ",
                                (f"{len(coverage.runs)} runs in {directory}", "green"), "  ",
                                (", ".join(f"{k}={v}" for k, v in cfg.constants.items()), "dim"))
    table.add_column("run", style="cyan", no_wrap=True)
    table.add_column("states", justify="right")
    table.add_column("made for")
    table.add_column("targets covered", justify="right")
    for file, run in zip(files, coverage.runs):
        made_for = str(run.first) + (" (the checker's counterexample)" if run.counterexample else "")
        table.add_row(file, str(len(run.steps)), Text(made_for), str(len(run.covers)))
    table.caption = Text(f"{coverage.distinct_states:,} distinct states explored in {coverage.seconds:.2f} s",
                         style="italic")
    table.caption_justify = "left"
    return table


def targets_table(coverage: Coverage, files: list) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title_justify="left")
    reached, total = len(coverage.covered), len(coverage.covered) + len(coverage.unreachable)
    table.title = Text(f"Coverage: {reached} of {total} targets reached", style="bold")
    table.add_column("target")
    table.add_column("first covered by", no_wrap=True)
    for target, index in coverage.covered.items():
        table.add_row(Text(str(target)), Text(files[index], style="cyan"))
    for target in coverage.unreachable:
        table.add_row(Text(str(target), style="dim"), Text("unreachable in this configuration", style="yellow"))
    return table
