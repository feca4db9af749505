"""Routing alone. The controller once sent one ordered stream to one runtime, so
a `CreateDataflow` always preceded any `AllowCompaction` that could pass its
`as_of`. With two runtimes, the multiplexer routes the create to the
interactive runtime and the compaction to the maintenance runtime that owns
the index. Nothing orders the two streams: once the peek is cancelled the
controller lets the index compact, maintenance applies it, and the publisher
raises `since` past the `as_of` of a create that interactive has not yet
rendered."""
