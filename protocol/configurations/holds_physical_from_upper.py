"""Physical compaction from the upper. The publisher once derived the physical
compaction frontier from the index's write frontier (`upper`) instead of
the published `since`. Physical compaction decides which batches may merge;
merging up to the upper while `since` is still behind it erases the
distinction between times a reader at `since` may still ask for. The first
`Ingest` followed by a `Publish` shows it."""
