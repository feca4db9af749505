"""The review page: checked configurations (and the mechanism matrix) as one self-contained HTML file.

Pure functions from a `CheckResult`, a `Trace` or a `Matrix` to HTML text:
no rich, no search, no network. Styles, script and drawings are inline, so
the file reads the same from a mail attachment or a CI artefact. What a step
says comes from `protocol.render.narrate.story`, the drawings from `protocol.render.svg`,
so the page, the terminal and the Markdown say the same thing.
"""

from __future__ import annotations

from protocol import properties
import re
from html import escape
from pathlib import Path

from protocol.render.narrate import Story, grouped_variables, legend, story, value_text
from protocol.render.svg import cycle_svg, sequence_svg
from protocol.model.trace import Trace

# ------------------------------------------------------------------ the page


def _asset(name: str) -> str:
    """The page's stylesheet or script, kept beside this module as plain files."""
    return (Path(__file__).parent / "report_assets" / name).read_text(encoding="utf-8")


def page(title: str, body: str, script: str = "report.js") -> str:
    """A complete HTML document with the inline stylesheet and `script`."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        f"<title>{escape(title)}</title>\n<style>\n{_asset('report.css')}</style>\n</head>\n"
        f"<body>\n{body}\n<script>\n{_asset(script)}</script>\n</body>\n</html>\n"
    )


def explorer_page(name: str) -> str:
    """The state explorer's page: an empty frame its script fills from the JSON API."""
    body = (f'<header class="page"><h1>explore {escape(name)}</h1> <span class="badge unknown" id="where"></span>'
            '<p class="hint">Pick an enabled action to take it; <kbd>\u2190</kbd> or "step back" undoes '
            'the last step. The states are explored as you go, from the same successor function '
            'the checker uses.</p></header>'
            '<main class="explorer"><section class="card" id="walk"><h2>Path</h2>'
            '<div class="tools"><button type="button" id="back">\u2039 step back</button>'
            '<button type="button" id="shortest">shortest path here</button>'
            '<button type="button" id="restart">initial state</button></div><ol id="path"></ol></section>'
            '<section class="card" id="state"><h2>State <span id="state-id"></span></h2>'
            '<div id="verdicts"></div><table class="state" id="variables"></table></section>'
            '<section class="card" id="actions"><h2>Enabled actions</h2><ul id="successors"></ul></section>'
            '</main>')
    return page(f"explore {name}", body, script="explore.js")


def anchor(*parts: str) -> str:
    """An id for a section: letters, digits and dashes only."""
    return re.sub(r"[^A-Za-z0-9]+", "-", "-".join(parts)).strip("-").lower()


def report_html(results: list, matrix=None, title: str | None = None, names: str | None = None) -> str:
    """The page for checked configurations, with an index when there is more than one thing
    on it; `matrix`, when given, is drawn as a grid after them. `names` says how a trace
    names its actions (narrate.story)."""
    sections = [result_section(result, names) for result in results]
    if matrix is not None:
        sections.append(matrix_section(matrix))
    names = [result.named.name for result in results] + (["mechanism matrix"] if matrix else [])
    title = title or "protocol report: " + ", ".join(names)
    header = _page_header(title, results, matrix)
    index = index_html(results, matrix) if len(sections) > 1 else ""
    return page(title, header + index + "\n".join(sections))


def _page_header(title: str, results: list, matrix) -> str:
    expected = all(r.as_expected for r in results) and (matrix is None or matrix.as_expected)
    badge = _badge("every verdict as expected" if expected else "NOT as expected", expected)
    has_trace = any(v.trace is not None for r in results for v in r.properties.values())
    hint = ('<p class="hint">Step through a counterexample with the buttons, or with '
            '<kbd>\u2190</kbd> <kbd>\u2192</kbd> (<kbd>Home</kbd> <kbd>End</kbd>) once you have '
            'clicked it; click a step in the table or the diagram to go there.</p>') if has_trace else ""
    return f'<header class="page"><h1>{escape(title)}</h1>{badge}{hint}</header>\n'


def _badge(text: str, good: bool | None) -> str:
    css = {True: "good", False: "bad", None: "unknown"}[good]
    return f'<span class="badge {css}">{escape(text)}</span>'


def index_html(results: list, matrix=None) -> str:
    """The table of contents of a page with several sections."""
    rows = []
    for result in results:
        violated = [f"{p} in {v.trace_length}" for p, v in result.properties.items() if v.holds is False]
        rows.append(f'<li><a href="#{anchor(result.named.name)}">{escape(result.named.name)}</a> '
                    f'{_badge("as expected" if result.as_expected else "NOT as expected", result.as_expected)}'
                    f' <span class="muted">{escape(", ".join(violated) or "every property holds")}</span></li>')
    if matrix is not None:
        rows.append(f'<li><a href="#{anchor("matrix")}">mechanism matrix</a> '
                    f'<span class="muted">{len(matrix.rows)} combinations</span></li>')
    return f'<nav class="index"><h2>Contents</h2><ul>{"".join(rows)}</ul></nav>\n'


# ------------------------------------------------------------------ a result


def result_section(result, names: str | None = None) -> str:
    """One configuration: its summary and verdicts, then each counterexample, then their legend."""
    name = result.named.name
    traces = [v.trace for v in result.properties.values() if v.trace is not None]
    body = [summary_html(result)]
    body += [trace_html(trace, result.config, anchor(name, trace.prop), f"{name}: counterexample to {trace.prop}",
                        names) for trace in traces]
    if traces:
        # full: the page shows every variable of every state (behind a disclosure)
        body.append(legend_html(legend([story(trace, result.config, names) for trace in traces], full=True)))
    return f'<section class="result" id="{anchor(name)}">{"".join(body)}</section>'


def _pairs(mapping: dict) -> str:
    return " ".join(f'<span class="chip">{escape(f"{k}={v}")}</span>' for k, v in mapping.items())


def _with_code(text: str) -> str:
    """Escaped text with its `backticked` names set as code, as the docstrings write them."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


def summary_html(result) -> str:
    """The configuration, its constants and switches, the counts, and every verdict against what is expected."""
    named, cfg = result.named, result.config
    facts = [("constants", _pairs(cfg.constants)), ("switches", _pairs(cfg.switches)),
             ("distinct states", f"{result.distinct_states:,}"), ("transitions", f"{result.transitions:,}"),
             ("depth", str(result.depth)), ("seconds", f"{result.seconds:.2f}")]
    if not result.complete:
        facts.append(("search", "INCOMPLETE: no property is reported to hold"))
    if result.named.reachable:
        reached = result.reached_words()
        facts += [(f"reachable: {what}", escape(where)) for what, where in reached] if reached is not None \
            else [("reachable", "not checked: this search keeps no states")]
    facts_html = "".join(f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in facts)
    mismatches = "".join(f'<p class="mismatch">{escape(line)}</p>' for line in result.mismatches())
    doc = f'<p class="doc">{_with_code(named.doc)}</p>' if named.doc else ""
    status = _badge("as expected" if result.as_expected else "NOT as expected", result.as_expected)
    return (f'<div class="summary"><h2>{escape(named.name)} {status}</h2>{doc}'
            f'<div class="facts"><table class="facts">{facts_html}</table>{verdicts_html(result)}</div>'
            f"{mismatches}</div>")


def verdicts_html(result) -> str:
    expected = result.named.expected_violations()
    rows = []
    for prop, verdict in result.properties.items():
        found = {True: "holds (vacuous)" if verdict.vacuous else "holds", None: "unknown"}.get(
            verdict.holds, f"violated in {verdict.trace_length}")
        wanted = "holds"
        if prop in expected:
            wanted = "violated" + (f" in {expected[prop]}" if expected[prop] else "")
        css = {True: "good", False: "bad", None: "unknown"}[verdict.holds]
        link = (f'<a href="#{anchor(result.named.name, prop)}">{escape(found)}</a>'
                if verdict.trace is not None else escape(found))
        rows.append(f'<tr><th>{escape(prop)}</th><td class="verdict {css}">{link}</td>'
                    f'<td class="muted">{escape(wanted)}</td></tr>')
    rows += [f'<tr><th>{escape(prop)}</th><td class="verdict unknown">does not apply</td>'
             f'<td class="muted">{escape(why)}</td></tr>'
             for prop, why in properties.not_applicable_for(result.config).items()]
    return ('<table class="verdicts"><thead><tr><th>property</th><th>verdict (states)</th>'
            f'<th>expected</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


# ------------------------------------------------------------------ a trace


def legend_html(entries: list) -> str:
    """The traces' legend (narrate.legend) as a definition list."""
    items = "".join(f"<dt><code>{escape(term)}</code></dt><dd>{escape(meaning)}</dd>" for term, meaning in entries)
    return f'<div class="legend"><h4>Legend</h4><dl>{items}</dl></div>'


def trace_html(trace: Trace, cfg, trace_id: str, title: str, names: str | None = None) -> str:
    """A counterexample: the stepper, the sequence diagram, the step table, and for a lasso its cycle."""
    told = story(trace, cfg, names)
    last = len(told.steps)
    parts = [f'<section class="trace" id="{trace_id}" data-steps="{last}" tabindex="0">',
             f"<h3>{escape(title)}: {trace.length} states</h3>",
             _stepper(last),
             '<div class="panes"><div class="diagram">', sequence_svg(trace, told, title), "</div>",
             steps_table(told, trace.prop), "</div>"]
    if trace.is_lasso:
        parts.append(lasso_html(trace, told))
    parts.append("</section>")
    return "".join(parts)


def _stepper(last: int) -> str:
    buttons = [("first", "\u00ab first", "first step (Home)"), ("prev", "\u2039 back", "previous step (\u2190)"),
               ("next", "next \u203a", "next step (\u2192)"), ("last", "last \u00bb", "last step (End)")]
    shown = "".join(f'<button type="button" data-go="{go}" title="{escape(tip)}" aria-label="{escape(tip)}">'
                    f"{label}</button>" for go, label, tip in buttons)
    return (f'<div class="stepper">{shown}<span class="position">step <b class="at">1</b> of {last}</span>'
            '<span class="now"></span></div>')


def steps_table(told: Story, prop: str) -> str:
    rows = [_step_row(step, last=step.number == len(told.steps), told=told) for step in told.steps]
    if told.ending:
        rows.append(f'<tr class="ending"><td></td><td>\u21ba the run {escape(told.ending)}</td></tr>')
    return ('<table class="steps"><thead><tr><th>#</th><th>step: the action in protocol words, '
            f'then what changed</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _step_row(step, last: bool, told: Story) -> str:
    marks = ' <span class="tag cycle">the cycle starts here</span>' if step.cycle_start else ""
    if last:
        marks += f' <span class="tag bad">violates {escape(told.prop)}</span>'
    action = escape(step.action) if step.number == 1 else f"<code>{escape(step.action)}</code>"
    cell = [f'<div class="action">{action}{marks}</div>', f'<p class="words">{escape(step.words)}</p>',
            changes_html(step.changed), full_state_html(step)]
    if last:
        cell.append(witness_html(told))
    css = "step violating" if last else "step"
    return f'<tr class="{css}" data-step="{step.number}"><td class="num">{step.number}</td><td>{"".join(cell)}</td></tr>'


def changes_html(groups) -> str:
    """What a step changed, grouped by where: the old value struck, the new one marked."""
    if not groups:
        return ""
    rows = []
    for group, found in groups:
        for i, change in enumerate(found):
            where = escape(group) if i == 0 else ""
            rows.append(f'<tr><th>{where}</th><td><code>{escape(change.variable)}</code></td>'
                        f'<td><del>{escape(value_text(change.variable, change.before))}</del> \u2192 '
                        f'<mark>{escape(value_text(change.variable, change.after))}</mark></td></tr>')
    return f'<table class="changes">{"".join(rows)}</table>'


def full_state_html(step) -> str:
    """Every variable of the state after the step, behind a disclosure; the changed ones marked."""
    changed = {(group, c.variable) for group, found in step.changed for c in found}
    rows = []
    for group, variables in grouped_variables(step.state):
        for i, (name, value) in enumerate(variables):
            text = escape(value_text(name, value))
            shown = f"<mark>{text}</mark>" if (group, name) in changed else text
            rows.append(f'<tr><th>{escape(group) if i == 0 else ""}</th><td><code>{escape(name)}</code></td>'
                        f"<td>{shown}</td></tr>")
    return (f'<details class="state"><summary>full state {step.number}</summary>'
            f'<table class="state">{"".join(rows)}</table></details>')


def witness_html(told: Story) -> str:
    lines = told.violation or list(told.notes[:1])
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    return (f'<div class="witness" role="note"><b>\u2717 {escape(told.prop)} is violated</b> '
            f"in this state:<ul>{items}</ul></div>")


def lasso_html(trace: Trace, told: Story) -> str:
    """The lasso's cycle drawn as a cycle, then why the cycle is a fair behaviour, family by family."""
    notes = list(told.notes)
    fairness = [n for n in notes if " is disabled in state " in n or " is taken in the cycle" in n
                or n.startswith("no action is fair")]
    other = [n for n in notes if n not in fairness]
    fair_items = "".join(f"<li>{escape(n)}</li>" for n in fairness) or "<li>no family to satisfy</li>"
    return ('<div class="lasso"><h4>The cycle</h4>'
            f'<div class="cycle-drawing">{cycle_svg(trace, told)}</div>'
            + "".join(f'<p class="note">{escape(n)}</p>' for n in other)
            + f'<h4>Why the cycle is fair, family by family</h4><ul class="fairness">{fair_items}</ul></div>')


# ------------------------------------------------------------------ the matrix


def matrix_section(matrix) -> str:
    """The mechanism matrix as a grid: one row per combination, a coloured cell per verdict,
    the minimal sufficient sets marked."""
    from protocol.tools.matrix import derivation_summary, mechanisms_text, named_words, property_names, remark

    props = property_names(matrix)
    table, minimal = matrix.sufficiency(), matrix.minimal_sets()
    head = "".join(f"<th>{breakable(p)}</th>" for p in props)
    rows = []
    for row in matrix.rows:
        outcome = matrix.outcome(row)
        css = ["minimal"] if row.mechanisms in minimal else []
        if row.same_as is not None:
            css.append("same")
        star = '<span class="tag good" title="minimal sufficient set">\u2605 minimal</span> ' \
            if row.mechanisms in minimal else ""
        cells = "".join(_matrix_cell(outcome, p) for p in props)
        states = f"{outcome.distinct_states:,}" if outcome else ""
        rows.append(f'<tr class="{" ".join(css)}"><td class="num">{row.number}</td>'
                    f"<td>{star}{breakable(mechanisms_text(row.mechanisms))}</td>{cells}"
                    f'<td class="count">{states}</td><td>{breakable(named_words(row, matrix))}</td>'
                    f'<td class="muted remark">{breakable(remark(row, matrix, table, minimal))}</td></tr>')
    return (f'<section class="matrix" id="{anchor("matrix")}"><h2>Mechanism matrix '
            f'{_badge("as expected" if matrix.as_expected else "NOT as expected", matrix.as_expected)}</h2>'
            f'<p class="doc">{escape(derivation_summary(matrix, minimal))}</p>'
            '<div class="scroll"><table class="grid"><thead><tr><th>#</th><th>mechanisms</th>'
            f'{head}<th>states</th><th>named</th><th>remark</th></tr></thead><tbody>{"".join(rows)}'
            '</tbody></table></div><p class="muted">\u2713 holds, \u2717 n violated with a shortest '
            "counterexample of n states, ? unknown; a dimmed row is the same system as an earlier one.</p>"
            "</section>")


def breakable(text: str) -> str:
    """`text` escaped, free to break between the words of a name (Compaction<wbr>NotStalled,
    release_<wbr>on_interactive): the grid's columns are as narrow as their longest word,
    so that at 1280 px the grid fits, its remark column included."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=_)(?=[a-z])", "<wbr>", escape(text))


def _matrix_cell(outcome, prop: str) -> str:
    if outcome is None or prop not in outcome.properties:
        return '<td class="verdict unknown">\u2013</td>'
    holds, length = outcome.properties[prop]
    css = {True: "good", False: "bad", None: "unknown"}[holds]
    text = {True: "\u2713", None: "?"}.get(holds, f"\u2717 {length}")
    return f'<td class="verdict {css}">{text}</td>'
