"""Routing alone, in the design's own TLA+ model: a free controller that allows
compaction in one command, readers that advance, no new data. The defect is
section 8's: nothing orders the maintenance stream after the interactive one.
A cancelled peek's read hold goes at the drop, and with it the only thing that
kept the controller from compacting; the controller then allows the index to
compact past the peek's `as_of` in one command, maintenance applies it, and
the publisher raises `since` past the `as_of` of a create the interactive
runtime has not yet applied. One command less than `HoldsRouted` (no policy to
advance first), and one step for one step the trace TLC gives for the TLA+
model's `HoldsRouted.cfg`, whose whole graph this configuration reproduces."""
