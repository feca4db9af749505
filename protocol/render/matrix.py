"""Rendering the mechanism matrix with rich: the table and a progress bar.
Knows nothing of the search; it draws a `protocol.tools.matrix.Matrix`.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, Group
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from protocol.tools.matrix import Matrix, Row, derivation_summary, mechanisms_text, named_words, property_names, remark
from protocol.render.terminal import VERDICT_STYLE, first_fitting, one_line_description


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


# Below this width the verdict columns take their initials (named in the caption)
# and the named configuration and the remark go under the mechanisms, in the
# same cell, so that no verdict, count or name is cut at 80 columns.
WIDE = 150
INITIALS = {"TypeOK": "TOK", "PhysicalLeSince": "PLS", "NoRegression": "NR", "CompactionNotStalled": "CNS"}


def initials(prop: str) -> str:
    """A property's short header below 80 columns: its capitals and digits (SinceLeStanding: SLS)."""
    return INITIALS.get(prop) or (prop if len(prop) <= 3 else "".join(c for c in prop if c.isupper() or c.isdigit()))


def matrix_table(matrix: Matrix, width: int = WIDE):
    """The widest layout that fits `width` without cutting a cell: every column; the named
    configuration and the remark under the mechanisms; the properties' initials with the
    count under the mechanisms too; and, narrower than that, one block of lines per row."""
    return first_fitting(width, [lambda: matrix_grid(matrix, narrow=False, tiny=False),
                                 lambda: matrix_grid(matrix, narrow=True, tiny=False),
                                 lambda: matrix_grid(matrix, narrow=True, tiny=True),
                                 lambda: matrix_rows(matrix)])


def matrix_grid(matrix: Matrix, narrow: bool, tiny: bool) -> Table:
    """`narrow`: the named configuration and the remark go under the mechanisms; `tiny`: every
    property takes its initials, the count goes there too, verdicts lose their space (✗12)
    and the mechanisms' column is never narrower than its longest word."""
    props = property_names(matrix)
    short = initials if tiny else (lambda prop: INITIALS.get(prop, prop))
    caption = CAPTION
    if narrow:
        caption += "\n" + "   ".join(f"{short(p)} {p}" for p in props if short(p) != p)
    table = Table(box=box.SIMPLE_HEAD, title=Text("mechanism matrix", style="bold"),
                  title_justify="left", caption=caption, caption_justify="left",
                  **(dict(padding=0, show_edge=False) if tiny else {}))  # its dividers space the columns
    sufficiency, minimal = matrix.sufficiency(), matrix.minimal_sets()
    rows = [row_cells(row, matrix, props, remark(row, matrix, sufficiency, minimal), narrow, tiny)
            for row in matrix.rows]
    longest_word = max((len(word) for cells in rows for word in cells[1].plain.split()), default=14)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("mechanisms" + ("; named; remark" if narrow else ""), overflow="fold",
                     min_width=max(14, longest_word) if tiny else 14)
    for prop in props:
        header = short(prop) if narrow else HEADERS.get(prop, prop)
        table.add_column(header, justify="center", no_wrap=True)
    if not tiny:
        table.add_column("states", justify="right", no_wrap=True)
    if not narrow:
        table.add_column("named")
        table.add_column("remark")
    for cells in rows:
        table.add_row(*cells)
    return table


def matrix_rows(matrix: Matrix) -> Group:
    """The matrix as a list, for a width no grid fits: per row its number, then its mechanisms,
    `initials:verdict` pairs (a pair is never split by a wrap), named, remark and count."""
    props = property_names(matrix)
    sufficiency, minimal = matrix.sufficiency(), matrix.minimal_sets()
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column("#", justify="right", no_wrap=True)
    grid.add_column("row")
    for row in matrix.rows:
        dim = "dim" if row.same_as is not None else ""
        cell = Text(mechanisms_text(row.mechanisms), style=dim)
        verdicts = Text()
        for prop in props:
            verdict = verdict_cell(row.outcome, prop)
            if verdict.plain:
                verdicts.append(f"{initials(prop)}:").append(verdict.plain.replace(" ", ""), style=verdict.style)
                verdicts.append(" ")
        states = f"{row.outcome.distinct_states:,} states" if row.outcome else ""
        for line in (verdicts, named_words(row, matrix), remark(row, matrix, sufficiency, minimal), states):
            if str(line).strip():
                cell.append("\n").append_text(line if isinstance(line, Text) else Text(line, style=dim))
        grid.add_row(Text(str(row.number), style=dim), cell)
    legend = "   ".join(f"{initials(p)} {p}" for p in props if initials(p) != p)
    return Group(Text("mechanism matrix", style="bold"), grid, Text(CAPTION + "\n" + legend, style="dim"))


def row_cells(row: Row, matrix: Matrix, props: list[str], why: str, narrow: bool = False,
              tiny: bool = False) -> list[Text]:
    outcome = row.outcome
    dim = "dim" if row.same_as is not None else ""
    named = named_words(row, matrix)
    named_cell = Text(named, style="bold red" if "NOT as expected" in named else "bold")
    why_cell = Text(why, style="bold" if why == "minimal sufficient set" else dim)
    mechanisms_cell = Text(mechanisms_text(row.mechanisms), style=dim)
    states = f"{outcome.distinct_states:,}" if outcome else ""
    if narrow:  # named and remark under the mechanisms, one line each
        for cell in (named_cell, why_cell, Text(f"{states} states") if tiny and states else Text("")):
            if cell.plain:
                mechanisms_cell.append("\n").append_text(cell)
    verdicts = [verdict_cell(outcome, prop) for prop in props]
    if tiny:
        verdicts = [Text(cell.plain.replace(" ", ""), style=cell.style) for cell in verdicts]
    return [
        Text(str(row.number), style=dim),
        mechanisms_cell,
        *verdicts,
        *([] if tiny else [Text(states)]),
        *([] if narrow else [named_cell, why_cell]),
    ]


def render_matrix(console: Console, matrix: Matrix) -> None:
    console.print(matrix_table(matrix, console.width))
    ok = matrix.as_expected
    console.print(Text(derivation_summary(matrix), style="bold green" if ok else "bold red"))
    if not ok:
        console.print(Text("Some named configuration is NOT as expected, or a run was incomplete.",
                           style="bold red"))


LONG_RUN_SECONDS = 30  # a matrix expected to take less goes without the warning


def about(seconds: float) -> str:
    """A duration in the unit a person plans with: `40 seconds`, `12 minutes`, `3 hours`."""
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.0f} {unit}s"
    return f"{seconds:,.0f} seconds"


def estimate_line(estimate) -> str | None:
    """What a long matrix should say before it starts (`tools.matrix.estimate`); None when
    it will be quick. A lower bound: the baseline's safety search times the combinations."""
    if estimate is None or (estimate.complete and estimate.at_least_seconds < LONG_RUN_SECONDS):
        return None
    where = ", ".join(f"{name}={value:,}" for name, value in estimate.constants.items())
    if estimate.complete:
        baseline = f"the baseline alone has {estimate.states:,} states ({estimate.seconds:.1f} s for safety)"
        expect = f"expect at least {about(estimate.at_least_seconds)}"
    else:
        baseline = (f"the baseline alone passes {estimate.states:,} states (the probe stopped there "
                    f"after {estimate.seconds:.1f} s)")
        expect = f"expect far more than {about(estimate.at_least_seconds)}"
    # Counted as the table and the last line count them: every combination, of which those
    # that are the same system as an earlier one are not checked again. `matrix -c P=8` said
    # "72 combinations" here and "0 of 96 combinations checked to the end" when interrupted.
    rows = estimate.rows or estimate.combinations
    same = rows - estimate.combinations
    counted = (f"{rows} combinations at {where}, {estimate.combinations} of them to check (the other {same} "
               "are the same system as one of those)" if same else f"{rows} combinations to check at {where}")
    return (f"the matrix has {counted}; {baseline}: {expect}; "
            "lower constants answer sooner, Ctrl-C stops cleanly")


def refused_line(constants: dict, total: int, refused: int, reasons: list[str]) -> str | None:
    """What the matrix says before it starts when its constants refuse some of its combinations
    (`tools.matrix.refused_by_constants`); None when they refuse none."""
    if not refused:
        return None
    where = ", ".join(f"{name}={value:,}" for name, value in constants.items())
    more = f" (and {len(reasons) - 1} other {'reason' if len(reasons) == 2 else 'reasons'})" if len(reasons) > 1 else ""
    return (f"{refused} of the matrix's {total} combinations are refused at {where}, so it has "
            f"{total - refused}: {reasons[0]}{more}")


class MatrixProgress:
    """A progress bar over the combinations being checked (only on a terminal)."""

    def __init__(self, console: Console, total: int):
        self.progress = Progress(
            TextColumn("matrix"), BarColumn(), MofNCompleteColumn(), one_line_description(),
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
