"""The refutations: retired designs that must keep failing.

Each module defines one `REFUTATION`: the switches it changes relative to
`Holds`, the property it must violate, the shortest counterexample's length
at the default constants, and, in its docstring, why the mechanism fails.
A refutation that stops failing, or fails with another shortest length,
fails `python -m protocol check`.
"""

from . import (
    holds_broadcast,
    holds_cap,
    holds_physical_from_upper,
    holds_release_on_maint,
    holds_routed,
    holds_unfair,
)

ALL = [
    holds_routed.REFUTATION,
    holds_broadcast.REFUTATION,
    holds_cap.REFUTATION,
    holds_release_on_maint.REFUTATION,
    holds_physical_from_upper.REFUTATION,
    holds_unfair.REFUTATION,
]
