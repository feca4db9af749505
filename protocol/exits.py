"""The exit codes of `python -m protocol`, one per class of ending (docs/checker.md, "Exit codes").

A CI reads the class from the code alone, without parsing --json:

- 0 as expected: the run went to the end and every verdict is what the configuration expects;
- 1 not as expected: a verdict the run decided differs from the expected one (the model changed);
- 2 usage or bad input: nothing was run, nothing written;
- 3 cut short: the run stopped before deciding every verdict (--max-states, --stop-on-violation,
  a configuration skipped) and nothing it decided is unexpected;
- 4 environment: the machine failed the run (a full disk, a closed or broken pipe, a lost worker,
  the memory or a process limit, a module not installed), not the model;
- 70 a defect of the tool: an error nothing above expects, with its traceback (sysexits.h's
  EX_SOFTWARE), so that a CI never reads a crash as a model that changed;
- 128 + the signal: interrupted, as shells report it (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).

This module imports nothing of the project, so that `python -m protocol` can end with these
codes even before the rest has loaded (a signal, a missing dependency).
"""

from __future__ import annotations

import os
import signal
import sys

EXIT_AS_EXPECTED = 0
EXIT_NOT_AS_EXPECTED = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_ENVIRONMENT = 4
EXIT_DEFECT = 70


class RunFailure(Exception):
    """A run the machine could not let finish (an output that cannot be written, a lost worker,
    too little memory to load the libraries): one line, exit 4 (EXIT_ENVIRONMENT). Here, below
    every module that raises it, not in the command line's."""


def interrupted_exit(signum: int | None) -> int:
    """128 + the signal that ended the run (Ctrl-C's when none was recorded), as a shell says of a
    process the signal killed: a wrapper tells an interrupted run from a finished one by the code."""
    return 128 + int(signum if signum is not None else signal.SIGINT)


def say(line: str) -> None:
    """One line on standard error, and never anywhere else: with stderr closed (`2>&-`) Python
    leaves sys.stderr None, where print() would write to standard output, the stream a --json
    consumer parses; a write that fails (`2>/dev/full`) is given up, and the exit code alone
    tells the class. Either way standard error is pointed at /dev/null, so that the flush at
    exit cannot fail once more and change the code."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(line + "\n")
        stream.flush()
    except (OSError, ValueError):
        silence(stream)


def silence(stream) -> None:
    """Point `stream`'s descriptor at /dev/null, dropping what its buffers held."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture)
        pass
