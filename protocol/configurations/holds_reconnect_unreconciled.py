"""A reconnection without reconciliation. The controller reconnects and forgets
the live peek; its `Drop` is never sent, because the new connection's history
no longer contains it. The old create still renders a reader on the replica,
and `Hello` drops nothing: the reader the controller let go of is never
dropped (ImportersRetired), and it pins compaction at its `as_of` for good
while the controller compacts past it (CompactionNotStalled). I1 still holds:
the peer hold is kept, and the new connection's compactions queue behind the
old connection's creates."""
