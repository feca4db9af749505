"""A shared publication point for a re-export alias. Index Y's dataflow
re-exports X's arrangement under its own id, and on every process both ids
name one publication point. The reviewed code kept a single maintenance
writer frontier there (overwritten by whichever id's `AllowCompaction`
maintenance applied last, even a lower one) and a single standing hold
(raised to the highest frontier the interactive runtime applied for either
id). So X's compaction carries the point past the `as_of` at which a peek
of Y, allowed by Y's own frontier, is still queued: I1 fails in 7 states.
And when Y's lower frontier lands after X's higher one, the writer frontier
moves back: NoRegression fails in 8 states. Keeping both frontiers per id,
as `HoldsAlias` does, fixes both."""
