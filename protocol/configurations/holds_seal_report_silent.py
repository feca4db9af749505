"""A parked peek cancelled without a report. The controller frees a dropped
peek's hold only once every process reports the dataflow retired; a peek
dropped while it waits for the seal is cancelled from the pending work without
ever building, and sends no report. The hold leaks: CtlHoldReleased fails, a
lasso of 5 states."""
