"""Rendering the mechanism matrix with rich: the table and a progress bar.
Knows nothing of the search; it draws a `protocol.matrix.Matrix`.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from .matrix import Matrix, Row, derivation_summary, mechanisms_text, named_words, property_names, remark
from .render import VERDICT_STYLE


# Two-line headers keep the five verdict columns narrow.
HEADERS = {"PhysicalLeSince": "Physical\nLeSince", "NoRegression": "No\nRegression",
           "CompactionNotStalled": "Compaction\nNotStalled"}
CAPTION = ("✓ holds   ✗ n violated, shortest counterexample of n states   "
           "? unknown (search cut short)   – not checked\n"
           "sufficient: I1 and CompactionNotStalled hold;   redundant: can be switched off "
           "keeping it sufficient")


def verdict_cell(outcome, prop: str) -> Text:
    if outcome is None:
        return Text("")
    if prop not in outcome.properties:
        return Text("–", style="dim")
    holds, length = outcome.properties[prop]
    words = {True: "✓", None: "?"}.get(holds, f"✗ {length}")
    return Text(words, style=VERDICT_STYLE[holds])


def matrix_table(matrix: Matrix) -> Table:
    props = property_names(matrix)
    table = Table(box=box.SIMPLE_HEAD, title=Text("mechanism matrix", style="bold"),
                  title_justify="left", caption=CAPTION, caption_justify="left")
    table.add_column("#", justify="right")
    table.add_column("mechanisms", overflow="fold", min_width=14)
    for prop in props:
        table.add_column(HEADERS.get(prop, prop), justify="center")
    table.add_column("states", justify="right")
    table.add_column("named")
    table.add_column("remark")
    sufficiency, minimal = matrix.sufficiency(), matrix.minimal_sets()
    for row in matrix.rows:
        table.add_row(*row_cells(row, matrix, props, remark(row, matrix, sufficiency, minimal)))
    return table


def row_cells(row: Row, matrix: Matrix, props: list[str], why: str) -> list[Text]:
    outcome = row.outcome
    dim = "dim" if row.same_as is not None else ""
    named = named_words(row, matrix)
    return [
        Text(str(row.number), style=dim),
        Text(mechanisms_text(row.mechanisms), style=dim),
        *(verdict_cell(outcome, prop) for prop in props),
        Text(f"{outcome.distinct_states:,}" if outcome else ""),
        Text(named, style="bold red" if "NOT as expected" in named else "bold"),
        Text(why, style="bold" if why == "minimal sufficient set" else dim),
    ]


def render_matrix(console: Console, matrix: Matrix) -> None:
    console.print(matrix_table(matrix))
    ok = matrix.as_expected
    console.print(Text(derivation_summary(matrix), style="bold green" if ok else "bold red"))
    if not ok:
        console.print(Text("Some named configuration is NOT as expected, or a run was incomplete.",
                           style="bold red"))


class MatrixProgress:
    """A progress bar over the combinations being checked (only on a terminal)."""

    def __init__(self, console: Console, total: int):
        self.progress = Progress(
            TextColumn("matrix"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
            TimeElapsedColumn(), console=console, transient=True,
        )
        self.task = self.progress.add_task("", total=total)

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self.progress.__exit__(*exc)

    def advance(self, row: Row, combinations: int = 1) -> None:
        """`row` checked, standing for `combinations` (itself and the rows that are the same system)."""
        self.progress.update(self.task, advance=combinations,
                             description=f"row {row.number} {mechanisms_text(row.mechanisms)}")
