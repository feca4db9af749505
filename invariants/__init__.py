"""The properties of model-spec section 5, one predicate each, named as in the spec.

State invariants take `(state, cfg)`; transition properties take
`(before, after, cfg)`. Each returns True when the property holds.
`explain` gives, for a state that breaks an invariant, the witnesses in
protocol words, for the last row of a counterexample.
"""

from .i1 import i1, i1_witnesses
from .leads_to import LeadsTo, compaction_not_stalled
from .no_regression import no_regression, no_regression_witnesses
from .physical_le_since import physical_le_since, physical_le_since_witnesses
from .type_ok import type_ok, type_ok_witnesses

STATE_INVARIANTS = {
    "TypeOK": type_ok,
    "I1": i1,
    "PhysicalLeSince": physical_le_since,
}
TRANSITION_PROPERTIES = {
    "NoRegression": no_regression,
}
WITNESSES = {
    "TypeOK": type_ok_witnesses,
    "I1": i1_witnesses,
    "PhysicalLeSince": physical_le_since_witnesses,
    "NoRegression": no_regression_witnesses,
}
SAFETY_PROPERTIES = tuple(STATE_INVARIANTS) + tuple(TRANSITION_PROPERTIES)
# Liveness: each maps a configuration to the leads-to pairs it is the conjunction of,
# checked under the configuration's fairness.
LIVENESS_PROPERTIES = {
    "CompactionNotStalled": compaction_not_stalled,
}

__all__ = [
    "STATE_INVARIANTS", "TRANSITION_PROPERTIES", "WITNESSES", "SAFETY_PROPERTIES",
    "LIVENESS_PROPERTIES", "LeadsTo", "compaction_not_stalled",
    "i1", "no_regression", "physical_le_since", "type_ok",
]
