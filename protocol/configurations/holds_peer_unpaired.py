"""A publication nobody pairs with its peer. The publisher registers a hold of its
own when it publishes, and the interactive runtime registers another when it
records the peer; no AllowCompaction ever moves the first. It pins the index
at its `as_of` for good: the controller compacts, every runtime applies it,
and `since` never follows (CompactionNotStalled). Pairing is not bookkeeping;
its failure is silent retention."""
