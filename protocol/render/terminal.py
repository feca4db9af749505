"""Rendering: the only module that imports rich. Knows nothing of the search.

It draws a `CheckResult` summary and a `Trace`, always through `Text` so
that queues printed as `[Create(0, 0)]` are not taken for markup.
"""

from __future__ import annotations

from protocol import properties as spec_properties
from rich import box
from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from protocol.render.narrate import grouped_variables, legend, story, value_text
from protocol.model.trace import Trace

VERDICT_STYLE = {True: "green", False: "red", None: "yellow"}


class OurConsole(Console):
    def on_broken_pipe(self) -> None:
        """The reader went away (`| head`): rich would exit 1 on its own; handed on instead to
        cli.py, which ends every command the same way (EXIT_BROKEN_PIPE)."""
        self.quiet = True
        raise BrokenPipeError(32, "the reader of the output went away")


# ------------------------------------------------------------------ the terminal model
#
# Width and colour are decided here, once, for every console a command draws on:
# - the width is COLUMNS when it is a whole number above zero (below MIN_WIDTH it is
#   raised to MIN_WIDTH: no table is drawn one character a line); COLUMNS that is 0,
#   negative or not a number counts as unset. Unset, a terminal gives its own width, and
#   a file or a pipe the command's default width (never the size of a terminal it is not);
# - colour and cursor movement on a terminal, never with NO_COLOR set; standard output
#   that is a pipe gets colour (and no cursor movement: no progress bar) when FORCE_COLOR
#   asks for it, as a CI log that renders ANSI wants its verdicts coloured; an --output
#   file never (issue 32: escape codes in a file one keeps), whatever FORCE_COLOR,
#   TTY_COMPATIBLE or TERM say.

MIN_WIDTH = 60
DEFAULT_WIDTH = 80


def stated_width(environ=None) -> int | None:
    """The width COLUMNS states, raised to MIN_WIDTH; None when it states none (unset, 0,
    negative, not a number)."""
    import os

    text = (os.environ if environ is None else environ).get("COLUMNS", "").strip()
    if not text.isdigit() or len(text) > 6 or int(text) <= 0:
        return None
    return max(int(text), MIN_WIDTH)


def is_a_terminal(stream) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (ValueError, OSError, AttributeError):  # closed, or not a stream at all
        return False


def terminal_width(stream) -> int | None:
    import os

    try:
        width = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return None
    return max(width, MIN_WIDTH) if width > 0 else None


def console_for(file=None, width: int | None = None, default_width: int = DEFAULT_WIDTH) -> Console:
    """The console a command draws on `file` (standard output when None), its width and
    colour decided by the terminal model above; `width`, when given, is the width."""
    import os
    import sys

    stream = file if file is not None else sys.stdout
    terminal = is_a_terminal(stream)
    if width is None:
        width = stated_width() or (terminal_width(stream) if terminal else None) or default_width
    system = "auto" if terminal else forced_colour(stream)
    colour = system is not None and not os.environ.get("NO_COLOR")
    return OurConsole(file=file, width=max(width, 1), highlight=False, soft_wrap=False,
                      force_terminal=terminal, color_system=system if colour else None,
                      no_color=not colour, force_interactive=terminal)


# FORCE_COLOR's levels (force-color.org: any other value that is not empty forces colour too)
FORCED_SYSTEMS = {"2": "256", "3": "truecolor"}


def forced_colour(stream) -> str | None:
    """The colour system FORCE_COLOR asks of `stream` when it is standard output but not a
    terminal (a CI log), None otherwise: a file given with --output never gets colour. A
    colour system given outright, with force_terminal off, colours the text and leaves
    `is_terminal` false, so that nothing is redrawn in place (no progress bar)."""
    import os
    import sys

    forced = os.environ.get("FORCE_COLOR", "")
    inner = getattr(stream, "stream", stream)  # a Sink's stream (cli/common.py)
    if not forced or getattr(stream, "path", None) is not None or inner is not sys.stdout:
        return None
    return FORCED_SYSTEMS.get(forced.strip(), "standard")


def plain_console(file, width: int) -> Console:
    """A console that never writes ANSI codes, whatever FORCE_COLOR says: for golden files and tests."""
    return OurConsole(file=file, width=width, highlight=False, soft_wrap=False,
                   force_terminal=False, color_system=None, no_color=True)


def plain_text(renderable, width: int) -> str:
    """`renderable` as plain text at a fixed width, without the trailing spaces rich pads with."""
    import io

    buffer = io.StringIO()
    plain_console(buffer, width).print(renderable)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def narrowest_width(renderable) -> int:
    """The fewest columns `renderable` can be drawn in without cutting a cell (its no_wrap
    cells whole, every word whole)."""
    import io

    from rich.measure import Measurement

    console = plain_console(io.StringIO(), 1_000_000)
    return Measurement.get(console, console.options, renderable).minimum


def first_fitting(width: int, layouts):
    """The first of `layouts` (callables, widest layout first) whose drawing fits `width`
    columns without cutting a cell; the last one, made to fit any width, otherwise."""
    *tried, last = layouts
    for layout in tried:
        drawn = layout()
        if narrowest_width(drawn) <= width:
            return drawn
    return last()


def fitted(table: Table, width: int):
    """`table` as drawn when it fits `width` columns without cutting a cell, else as a
    list of its rows (`listed`): a terminal narrower than a table keeps every value."""
    return first_fitting(width, [lambda: table, lambda: listed(table)])


def listed(table: Table) -> Group:
    """`table` as a list of its rows, each a block of "header: value" lines (a value
    stacked on several lines is joined on one), then its caption: every value kept at
    any width, since a line that does not fit wraps instead of being cut."""
    headers = [one_line_header(str(column.header)) for column in table.columns]
    columns = [list(column.cells) for column in table.columns]
    blocks: list = [Text(str(table.title), style="bold")] if table.title else []
    for row in range(table.row_count):
        block = Text()
        for header, cells in zip(headers, columns):
            block.append(f"{header}: " if header else "")
            block.append(one_line(cells[row]))
            block.append("\n")
        blocks.append(block)
    if table.caption:
        blocks.append(Text(str(table.caption)))
    return Group(*blocks)


def one_line_header(header: str) -> str:
    """A header stacked on lines on one: "bytes/" and "state" are "bytes/state", "peak" and "MB" "peak MB"."""
    joined = ""
    for piece in header.split("\n"):
        piece = piece.strip()
        joined += piece if not joined or joined.endswith(("/", "-", "+")) else " " + piece
    return joined


def one_line(cell) -> Text:
    """A table cell (a string or a Text, perhaps stacked on lines) on one line, its styles kept."""
    text = cell.copy() if isinstance(cell, Text) else Text(str(cell))
    return Text(" ").join(text.split("\n"))


# ------------------------------------------------------------------ traces

CHANGED_STYLE = "bold yellow"
ARROW = " \u2192 "


def _changes_grid(groups) -> Table:
    """The changed variables, grouped: global first, then "process 0", "process 1", ..."""
    grid = Table.grid(padding=(0, 2, 0, 0))
    grid.add_column("where", style="cyan", no_wrap=True)
    grid.add_column("variable", style="bold", no_wrap=True)
    grid.add_column("change")
    for group, found in groups:
        for i, change in enumerate(found):
            grid.add_row(
                Text(group + ":" if i == 0 else ""),
                Text(change.variable),
                Text.assemble((value_text(change.variable, change.before), "dim"), ARROW,
                              (value_text(change.variable, change.after), CHANGED_STYLE)),
            )
    return grid


def _state_grid(state, changed_groups) -> Table:
    """Every variable of a state (--full), grouped, the ones this step changed highlighted."""
    changed = {(group, change.variable) for group, found in changed_groups for change in found}
    grid = Table.grid(padding=(0, 2, 0, 0))
    grid.add_column("where", style="cyan", no_wrap=True)
    grid.add_column("variable", style="bold", no_wrap=True)
    grid.add_column("value")
    for group, variables in grouped_variables(state):
        for i, (name, value) in enumerate(variables):
            style = CHANGED_STYLE if (group, name) in changed else ""
            grid.add_row(Text(group + ":" if i == 0 else ""), Text(name),
                         Text(value_text(name, value), style=style))
    return grid


def _step_cell(told, full: bool, last: bool, violation: list[str], prop: str):
    heading = Text(told.action, style="bold")
    if told.cycle_start:
        heading.append("   \u2190 the cycle starts here", style="magenta")
    parts = [heading, Text(told.words, style="italic" if told.number == 1 else "")]
    if full:
        parts.append(_state_grid(told.state, told.changed))
    elif told.changed:
        parts.append(_changes_grid(told.changed))
    if last and violation:
        parts += [Text(f"\u2717 {prop} violated: {line}", style="bold red") for line in violation]
    return Group(*parts)


def trace_table(trace: Trace, full: bool = False, explain=None, cfg=None, names: str | None = None) -> Table:
    """One row per state: the action in protocol words, then what it changed, grouped by process.

    `full` lists every variable of every state instead (as TLC does). `cfg`,
    when given, lets the last row name the property's witnesses for any
    property; `explain` adds lines of your own under the table; `names` says
    how actions are named (narrate.story).
    """
    told = story(trace, cfg, names)
    table = Table(box=box.SIMPLE_HEAD, show_lines=False, title_justify="left", expand=False, leading=1)
    table.title = Text(f"Counterexample to {trace.prop}: {trace.length} states", style="bold red")
    table.add_column("#", justify="right", style="cyan", no_wrap=True)
    table.add_column("step: the action in protocol words, then " + ("every variable" if full else "what changed"))
    for step in told.steps:
        last = step.number == len(told.steps)
        table.add_row(str(step.number), _step_cell(step, full, last, told.violation, told.prop))
    if told.ending:
        table.add_row("", Text("\u21ba " + told.ending, style="bold magenta"))
    caption = [*(explain or ()), *told.notes]
    if caption:
        table.caption = Text("\n".join(caption), style="italic")
        table.caption_justify = "left"
    return table


def legend_table(entries: list) -> Table:
    """A trace's legend (narrate.legend): each term, then what it means; a meaning wraps at
    spaces, a term is never cut."""
    grid = Table.grid(padding=(0, 2, 0, 0))
    grid.title, grid.title_justify, grid.title_style = "legend", "left", "bold"
    grid.add_column("term", style="cyan", no_wrap=True)
    grid.add_column("meaning")
    for term, meaning in entries:
        grid.add_row(Text(term), Text(meaning))
    return grid


def result_traces(result, full: bool = False, explain=None, names: str | None = None) -> list:
    """Each counterexample of `result` as a table, then one legend for them all (none without
    a counterexample)."""
    traces = [verdict.trace for verdict in result.properties.values() if verdict.trace is not None]
    if not traces:
        return []
    drawn = [trace_table(trace, full=full, explain=explain(trace) if explain else None, cfg=result.config,
                         names=names) for trace in traces]
    told = [story(trace, result.config, names) for trace in traces]
    # a table with a caption ends on its last line of text, one without on a blank line
    return [*drawn, Padding(legend_table(legend(told, full)), (1 if drawn[-1].caption else 0, 0, 0, 0))]


# ----------------------------------------------------------------- summary


def verdict_text(verdict) -> Text:
    if verdict.holds is True:
        return Text("holds (vacuous)" if verdict.vacuous else "holds", style="yellow" if verdict.vacuous else "green")
    if verdict.holds is False:
        return Text(f"violated in {verdict.trace_length}", style="red")
    return Text("unknown", style="yellow")


def expectation_text(result, prop: str) -> Text:
    expected = result.named.expected_violations()
    if prop not in expected:
        unmet = unmet_needs(result.named, prop)
        if unmet:  # the manifest names the violation, but these constants are below what it needs
            return Text(f"holds (needs {unmet})")
        return Text("holds")
    return Text("violated" if expected[prop] is None else f"violated in {expected[prop]}")


# Below this width a nested table (the properties, the reachable states) is drawn under
# the box instead of in it, where it has the whole width: its names and verdicts wrap at
# spaces rather than being cut.
NESTED_WIDTH = 80


def with_nested(table: Table, nested: list, width: int | None):
    """`table` with each (label, nested table) of `nested` as a row, or, narrower than
    NESTED_WIDTH, the nested tables under it (a Group), each titled by its label."""
    if width is None or width >= NESTED_WIDTH:
        for label, inner in nested:
            table.add_row(label, inner)
        return table
    below = []
    for label, inner in nested:
        if isinstance(inner, Table):
            inner.title, inner.title_justify, inner.title_style = label, "left", "cyan"
            below.append(inner)
        else:
            below.append(Text.assemble((label + ": ", "cyan"), inner))
    return Group(table, *below)


def unmet_needs(named, prop: str) -> str:
    """The constants `named`'s violation of `prop` needs and its run is below ("P>=2"), or ""
    when the manifest expects no violation of `prop` at all."""
    if prop not in dict(named.expect):
        return ""
    least: dict = {}
    for name, value in named.needs:
        for constant, at in (value if isinstance(value, tuple) else ((name, value),)):
            if not isinstance(value, tuple) or name == prop:
                least[constant] = max(least.get(constant, 0), at)
    return ", ".join(f"{constant}>={at}" for constant, at in least.items() if getattr(named.config, constant) < at)


def summary_table(result, width: int | None = None):
    """The one-screen summary (a Group instead of a Table narrower than NESTED_WIDTH)."""
    named, cfg = result.named, result.config
    table = Table(box=box.ROUNDED, show_header=False, title_justify="left")
    status = "as expected" if result.as_expected else "NOT as expected"
    if not result.complete or result.interrupted:  # a run cut short is never "as expected"
        status = f"INCOMPLETE, {'found ' + status if result.as_expected else status}"
    table.title = Text.assemble(
        (named.name, "bold"), "  ", (status, "green" if status == "as expected" else "bold red")
    )
    # Labels wrap at 18 columns ("distinct states\n(symmetry-reduced)") so that the
    # properties keep their full names and verdicts at 80 columns.
    table.add_column("what", style="cyan", max_width=18)
    table.add_column("value")
    table.add_row("constants", Text(", ".join(f"{k}={v}" for k, v in cfg.constants.items())))
    table.add_row("switches", Text(", ".join(f"{k}={v}" for k, v in cfg.switches.items())))
    for label, value in result_counts(result):
        table.add_row(label, Text(value))
    if not result.complete:
        why = "interrupted" if result.interrupted else "cut short"
        table.add_row("search", Text(f"INCOMPLETE ({why}): no property is reported to hold",
                                     style="bold yellow"))
    elif result.interrupted:
        table.add_row("search", Text("complete, but interrupted while deciding liveness: "
                                     "its verdicts are unknown", style="bold yellow"))
    props = Table(box=None, show_header=True, padding=(0, 2, 0, 0))
    props.add_column("property", style="bold", no_wrap=True)
    props.add_column("verdict (states)", no_wrap=True)
    props.add_column("expected", style="dim")
    for prop, verdict in result.properties.items():
        props.add_row(prop, verdict_text(verdict), expectation_text(result, prop))
    for prop, why in spec_properties.not_applicable_for(cfg).items():
        props.add_row(prop, Text("does not apply", style="dim"), Text(why))
    reached = reachable_table(result)
    nested = [("properties", props)] + ([("reachable", reached)] if reached is not None else [])
    narrow = width is not None and width < NESTED_WIDTH
    if not narrow:
        nested, drawn = [], with_nested(table, nested, None)
    for line in result.mismatches():
        table.add_row("mismatch", Text(line, style="bold red"))
    return with_nested(table, nested, width) if narrow else drawn


def reachable_table(result):
    """The states the configuration expects to exist, and the depth where each was first
    reached; None when it names none."""
    if not result.named.reachable:
        return None
    words = result.reached_words()
    if words is None:
        return Text("not checked: this search keeps no states to look for them in", style="yellow")
    rows = Table(box=None, show_header=True, padding=(0, 2, 0, 0))
    rows.add_column("state")  # a long description wraps; the depth stays whole
    rows.add_column("first reached", no_wrap=True)
    for what, where in words:
        rows.add_row(Text(what), Text(where, style="red" if where.startswith("not") else "green"))
    return rows


def result_counts(result) -> list[tuple[str, str]]:
    rows = [
        ("distinct states", f"{result.distinct_states:,}"),
        *([("distinct states (symmetry-reduced)", f"{result.reduced_states:,}")]
          if getattr(result, "reduced_states", None) is not None else []),
        ("transitions", f"{result.transitions:,}"),
        ("depth", str(result.depth)),
        ("seconds", f"{result.seconds:.2f}"),
    ]
    collision = getattr(result, "fingerprint_collision", None)
    if collision is not None:  # TLC's two estimates, optimistic first
        rows.append(("fingerprint collision probability",
                     f"{collision['optimistic']:.1e} (optimistic),\n{collision['actual']:.1e} (actual)"))
    return rows


def render_result(console: Console, result, show_traces: bool = True, full: bool = False,
                  explain=None, names: str | None = None) -> None:
    """The one-screen summary, then each counterexample found, then their legend."""
    console.print(summary_table(result, console.width))
    if not show_traces:
        return
    for drawn in result_traces(result, full, explain, names):
        console.print(drawn)


def render_totals(console: Console, results, seconds: float, skipped=(), title: str = "check --all") -> None:
    """One line per configuration: counts, the violations found, and whether as expected; a
    search cut short (--max-states, --stop-on-violation, Ctrl-C) is counted apart, never as
    as expected."""
    table = Table(box=box.SIMPLE_HEAD, title=Text(title, style="bold"), title_justify="left",
                  pad_edge=False)
    table.add_column("configuration", no_wrap=True)
    table.add_column("states", justify="right", no_wrap=True)
    table.add_column("depth", justify="right")
    table.add_column("violated (states)", overflow="fold")
    table.add_column("expected", no_wrap=True, min_width=8)
    for result in results:
        violated = "\n".join(
            f"{p} ({v.trace_length})" for p, v in result.properties.items() if v.holds is False
        ) or "none"
        if incomplete(result):
            verdict = Text("cut short", style="bold yellow")
        else:
            verdict = Text("yes", style="green") if result.as_expected else Text("NO", style="bold red")
        table.add_row(result.named.name, f"{result.distinct_states:,}", str(result.depth), violated, verdict)
    console.print(table)
    cut = sum(incomplete(r) for r in results)
    failed = sum(not r.as_expected and not incomplete(r) for r in results)
    line = f"{len(results)} configurations, {failed} not as expected"
    if cut:
        line += f", {cut} cut short (incomplete: no verdict)"
    line += f", {seconds:.1f} s"
    if skipped:
        line += f"; skipped (no verdict): {', '.join(skipped)}"
    console.print(Text(line, style="bold red" if failed or skipped or cut else "bold green"))


def incomplete(result) -> bool:
    return not result.complete or bool(getattr(result, "interrupted", False))


class ProgressView:
    """A live progress line for a running search (only on a terminal)."""

    def __init__(self, console: Console, name: str):
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            SpinnerColumn(), one_line_description(), TimeElapsedColumn(),
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


# Below this width `list` puts the expected violation under the name, and the matrix
# takes initials for every property, so that no word is cut at 60 columns.
NARROW = 80


def configurations_table(configurations, width: int = NARROW) -> Table:
    """The named configurations: the switches each changes from Holds (the shipped
    design every refutation is a variation of), and its expected verdict. Below NARROW
    columns the expected violation goes under the name; the switches' column is never
    narrower than its longest word (a word is wrapped whole, never cut)."""
    from protocol.model.config import HOLDS

    rows = []
    for named in configurations:
        changed = {k: v for k, v in named.config.switches.items() if getattr(HOLDS, k) != v}
        if named.config.constants != HOLDS.constants:
            changed.update({k: v for k, v in named.config.constants.items() if getattr(HOLDS, k) != v})
        expected = "\n".join(f"{prop}\nin {length} states"
                             for prop, length in named.expected_violations().items()) or "none"
        shown = "\n".join(f"{k}={v}" for k, v in changed.items()) or "none (this is Holds)"
        rows.append((named.name, shown, expected))
    longest_word = max(len(word) for _, shown, _ in rows for word in shown.split())
    # The wide layout needs the longest name, word of switches and line of expected
    # violations side by side, with a space either side of each column.
    wide = (max(len(name) for name, _, _ in rows) + longest_word
            + max(len(line) for _, _, expected in rows for line in expected.splitlines()) + 6)
    narrow = width < max(NARROW, wide)
    table = Table(title="named configurations", title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    table.add_column("name" + ("; expected violation" if narrow else ""), no_wrap=not narrow)
    table.add_column("switches changed from Holds", min_width=longest_word)
    if not narrow:
        table.add_column("expected violation", no_wrap=True)
    for name, shown, expected in rows:
        if narrow:
            table.add_row(Text(name + "\n").append(Text(expected, style="dim")), Text(shown))
        else:
            table.add_row(name, Text(shown), expected)
    return table


def folded(line: str, width: int) -> str:
    """A line of text printed as it is taken (`bench`'s one per measurement) within `width`
    columns: broken at spaces, the continuation indented by two, no figure cut (a word longer
    than the width stays whole). At COLUMNS=60 bench's lines were 83 to 92 columns, which a
    terminal wrapped mid-figure."""
    import textwrap

    if len(line) <= width:
        return line
    return "\n".join(textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False,
                                   break_on_hyphens=False))


def one_line_description():
    """A progress bar's description shortened with an ellipsis, never wrapped onto a second
    line: a progress bar redraws one line in place, and a wrapped one is left behind mid-word."""
    from rich.progress import TextColumn
    from rich.table import Column

    return TextColumn("{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis"))


def render_coverage(console: Console, coverage: dict) -> None:
    """Coverage per action, as TLC reports it: the transitions each took (None: edges not kept)
    and the distinct states it found first."""
    table = Table(title="coverage", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("action")
    table.add_column("transitions", justify="right")
    table.add_column("distinct states found first", justify="right")
    for name, (taken, found) in coverage.items():
        table.add_row(Text(name), "" if taken is None else f"{taken:,}", f"{found:,}")
    console.print(table)
