"""Retirement reports filtered by ownership. The controller frees a dropped
peek's read hold only once every process reports the dataflow retired, but the
multiplexer forwards a report only for a dataflow it still records as owned,
and the drop already evicted the owner. No report arrives, the hold leaks, and
the index's `since` stops advancing: CtlHoldReleased fails, a lasso of 5
states."""
