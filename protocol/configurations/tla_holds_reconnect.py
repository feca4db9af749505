"""The design's own model with one reconnection. Its `Hello` queues nothing: the
controller forgets its dataflow and that dataflow's read hold and takes a new
epoch, while the old epoch's commands still execute. A create queued before
the reconnection still renders a reader, nothing will ever drop it (the
controller sent no `Drop` and no reconciliation runs), and the controller,
holding nothing, compacts past it: the reader pins the publisher's `since`
below what the controller allowed, for good (CompactionNotStalled). Every
state of this configuration is a state of the design's `Holds.tla` with
`MaxEpochs = 1` and no queue bound; TLC finds the same failure with a longer
lasso."""
