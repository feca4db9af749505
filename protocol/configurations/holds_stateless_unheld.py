"""Every command to both runtimes, and no hold. The stateless multiplexer sends a
peek's create and drop to maintenance as well (as peer records) and broadcasts
compaction, so within each stream the create now comes before the compactions
that follow it. But the two runtimes still drain at their own rates: a
cancelled peek lets the controller compact, maintenance pops the peer record,
its removal and the compaction, and the publisher raises `since` past the
`as_of` of a create still queued on the interactive stream. Section 8's
counterexample survives, two maintenance pops longer. Restoring the order
within each stream does not restore it between them; the standing (peer) hold
does."""
