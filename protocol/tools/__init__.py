"""What users run besides a check: matrix, simulate, bench, generate, validate, logs, ITF, docs, the explorer."""
