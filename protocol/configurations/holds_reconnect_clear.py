"""A replica that clears its peer hold at a reconnection. "The replica clears
nothing at a reconnection" is load-bearing: a peer hold that the interactive
runtime's `Hello` unregisters is gone until that runtime applies its next
compaction. The index is then published and unheld (PeerHeld), the publisher
may pass the compaction that would register the hold again (SinceLeStanding),
and a read queued after `Hello` and ahead of that compaction is unprotected
once maintenance applies it (I1)."""
