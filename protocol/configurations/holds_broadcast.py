"""Broadcast without the standing hold. Sending `AllowCompaction` to both
runtimes puts the compaction on the interactive stream behind the create,
which restores the lost order, but only on the interactive stream. If the
interactive runtime applies the compaction without recording it, nothing
stops the publisher: it still follows the maintenance runtime's applied
frontier, which runs ahead of the creates queued on interactive. Broadcast
is necessary, not sufficient: the publisher must be bounded by what the
interactive runtime has applied."""
