"""Acquisition with the release on the maintenance stream. The multiplexer sends
`Acquire` to maintenance with each create, so the hold is installed before
any later compaction on that same stream, which fixes routing's hole. But a
release routed to maintenance too can be applied while the interactive
runtime has not yet rendered the create that the hold protected: the drop
travels on the interactive stream and the release overtakes it. The hold
goes, the publisher compacts, and the still-queued create would read below
`since`. The release has to travel behind the create, on the interactive
stream."""
