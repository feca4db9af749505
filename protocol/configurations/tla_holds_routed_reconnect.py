"""Routing alone in the design's own model, with one reconnection. The I1 failure
is `TlaHoldsRouted`'s, and the reconnection adds the design's liveness
failure: a create queued before `Hello` renders a reader that nobody drops,
and it pins compaction below what the controller allowed (CompactionNotStalled).
The state space is the design's `Holds.tla` with its routed compaction,
`MaxEpochs = 1` and no queue bound."""
