"""Broadcast without the standing hold, in the design's own TLA+ model: a
free controller, readers that advance, no new data. The compaction now also
goes to the interactive runtime, behind the create, but the interactive
runtime applies it without recording it, so the publisher still follows the
maintenance runtime's applied frontier alone: the controller allows compaction
past a cancelled peek's `as_of`, maintenance applies it, and `since` passes
the `as_of` of a create still queued on the interactive stream. The TLA+ model
fails in the same six states; its graph is larger only because it records the
applied compaction in `standing` under plain broadcast too, where nothing
reads it."""
