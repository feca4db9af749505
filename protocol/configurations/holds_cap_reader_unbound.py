"""The cap without the reader's own registration as a bound. Once process 0
renders the peek, its frontier report lifts the cap and the held-back
compaction reaches maintenance; with the reader's registration ignored, the
publisher compacts past the `as_of` the rendered reader still reads at. I1
fails in 7 states, with one process (where `HoldsCap` holds): without the
standing hold, the registration bore that load."""
