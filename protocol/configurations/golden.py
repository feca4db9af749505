"""Golden traces: each refutation's expected shortest counterexample, kept as text.

Every refutation has `protocol/configurations/<Name>.txt`: its counterexample drawn by the
terminal renderer as plain text (no ANSI codes) at a fixed width of
`GOLDEN_WIDTH` columns. A change to the model or to the narration that changes
a counterexample then shows in review as a diff of that file.

    python -m protocol docs --check   # compare (with docs/refutations.md); exit 1 and a diff
    python -m protocol docs --write   # regenerate them after an intended change
"""

from __future__ import annotations

import difflib
from pathlib import Path

GOLDEN_WIDTH = 100
REGENERATE = "python -m protocol docs --write"


def golden_path(name: str) -> Path:
    from protocol import configurations as configs
    return Path(configs.__file__).parent / f"{name}.txt"


def golden_text(name: str, result=None) -> str:
    """The counterexample `name` must produce, rendered as its golden file holds it.

    `result` is `name`'s CheckResult at the default constants, when the caller has it.
    """
    from protocol.configurations.named import lookup
    from protocol.render.terminal import plain_text, trace_table
    from protocol.run import check

    named = lookup(name)
    result = result or check(named)
    drawn = []
    for prop in named.expected_violations():  # a refutation may name several properties
        trace = result.violation(prop)
        if trace is None:
            drawn.append(f"{name}: no counterexample to {prop} was found\n")
        else:
            drawn.append(plain_text(trace_table(trace, cfg=result.config), GOLDEN_WIDTH))
    return "\n".join(drawn)


def difference(name: str, expected: str | None, actual: str) -> str:
    """A unified diff from the stored golden file to what the model produces now."""
    if expected is None:
        return f"{golden_path(name)} is missing: run `{REGENERATE}`\n"
    diff = difflib.unified_diff(
        expected.splitlines(keepends=True), actual.splitlines(keepends=True),
        fromfile=f"refutations/{name}.txt (stored)", tofile=f"refutations/{name}.txt (now)",
    )
    return "".join(diff)
