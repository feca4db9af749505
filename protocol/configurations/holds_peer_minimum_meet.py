"""A peer hold seeded at the minimum time, under the trace's meet. As
`HoldsPeerMinimum`, and the trace compacts to the meet of its holds: the hold
at 0 drags `since` back from 1 to 0 (NoRegression), and if the controller never
compacts again nothing lifts it, so what it allowed is never realized
(CompactionNotStalled). The join is what makes the design's log-index peers "at
the minimum time" safe."""
