"""The partitioned search: the state space split by fingerprint across workers."""
