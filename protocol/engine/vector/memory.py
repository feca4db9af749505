"""How the vector engine's process keeps the memory it frees. Knows nothing of the protocol.

A level's expansion allocates arrays of tens to hundreds of megabytes and frees
them by the next one. glibc's malloc gives every block over 32 MB (its most)
back to the kernel on free and maps the next one afresh, which the kernel then
faults in and zeroes page by page. On a 2-core virtual machine, HoldsSealAlias
at P=2 with liveness spent 10.8 of its 58.0 CPU seconds in the kernel; with
the freed blocks kept in the heap and reused as they are, 5.6 of 51.5 (its
sort 13.6 s to 9.9), for about 8% more peak memory (2.75 GB to 2.98 GB).
"""

from __future__ import annotations

import ctypes
import sys

M_TRIM_THRESHOLD = -1  # mallopt's parameters, from glibc's malloc.h
M_MMAP_MAX = -4
KEPT_AT_TOP = 2**31 - 1  # the most free memory left at the heap's top before it is given back (a C int)

_kept = False


def keep_freed_memory() -> bool:
    """Have malloc keep freed blocks for reuse instead of handing them back to the
    kernel (no block mapped on its own, the heap's top not trimmed below 2 GB). Once
    per process; False where the C library is not glibc (nothing changes there)."""
    global _kept
    if _kept or not sys.platform.startswith("linux"):
        return _kept
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # musl and others: no mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _kept = bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, KEPT_AT_TOP))
    return _kept
