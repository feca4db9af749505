"""The peer hold registered only by the reading runtime. The index is created in
the stream; maintenance publishes it when it pops the create, but registers no
hold, leaving that to the interactive runtime when it records the peer. A
published index is then unheld (PeerHeld, at once), and once a read is queued
behind the index's create on a lagging interactive runtime, maintenance can
apply a compaction past it and the publisher raises `since` past the read's
`as_of` (I1). The design has the publisher register the hold when it
publishes, before any AllowCompaction for the index on its own stream."""
