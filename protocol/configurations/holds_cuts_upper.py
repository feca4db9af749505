"""A reader's cut floored at the write frontier rather than at the chain's
coverage. The write frontier can lead what the sink has published, so a reader
registering in that window declares a cut past the coverage, and the publisher
merges past what the chain holds: PhysicalLeCoverage fails in 5 states (a
join's assertion aborts the worker)."""
