"""The multiplexer's cap. The multiplexer held back the compaction it forwarded
to maintenance at the `as_of` of every interactive dataflow until the
interactive runtime reported the dataflow's frontier, which retired the cap.
But the cap is one structure fed by process 0's frontier reports: once
process 0 has rendered the create, compaction flows to every process, and
process 1's interactive runtime may still have the create queued. Processes
other than 0 get no cross-runtime ordering from it (with one process the cap
is sound, which is why this refutation needs P >= 2)."""
