"""`python -m protocol`: the command line lives in protocol/cli/main.py.

Kept apart so that the subcommands import their helpers from one module
object, `protocol.cli.common`, instead of a second copy of `__main__`.
Run as the program, it catches the signals that end a run before anything
else is imported, so that one arriving while the modules load ends it the
same way (one line, exit 128 + the signal). Imported (by a tool listing the modules), it
touches no signal.
"""

import os
import sys

# Before numpy or scipy is imported: their BLAS library starts one thread per core at import,
# and under a memory limit (`ulimit -v`) that start-up retries a failed malloc for ever, deaf
# to signals. Nothing here does linear algebra that threads would speed up; a user's own
# setting is kept.
for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

from protocol.exits import EXIT_ENVIRONMENT, interrupted_exit, say  # noqa: E402
from protocol.lifecycle import (  # noqa: E402
    catch_signals, deferred, how, ignore_signals, interrupted, missing_dependency, signal_received,
)


def exit_with(code: int):
    """Exit with `code`, the run's own, whatever interrupted it and how it was handled."""
    ignore_signals()  # the run has ended and said how; the interpreter's own exit is not to be cut
    # CPython notes a KeyboardInterrupt raised inside code run from a string (the
    # namedtuple, attrs and dataclasses machinery compile their methods so) and,
    # although it was caught, exits "killed by SIGINT" at the end; running any
    # string clears that note.
    exec("")
    sys.exit(code)


def load_and_run() -> None:
    try:
        with deferred():  # a signal raised inside the import machinery is "ignored" with a traceback
            catch_signals()
            from protocol.cli import main
    except BaseException as error:
        # A dependency missing from this Python: one line, as from any command (cli/main.py).
        line = missing_dependency(error) if isinstance(error, ModuleNotFoundError) else None
        if line is not None:
            say(f"protocol: {line}")
            exit_with(EXIT_ENVIRONMENT)
        # Ctrl-C, SIGTERM or SIGHUP while the modules load: nothing has run yet. (Python 3.11
        # hands a KeyboardInterrupt raised in a class body's __set_name__ on as a RuntimeError.)
        if not (isinstance(error, KeyboardInterrupt) or interrupted()):
            raise
        say_interrupted_before_any_result()
    try:
        code = main()
    except KeyboardInterrupt:  # a signal in the instant before main's own lifecycle began
        say_interrupted_before_any_result()
    exit_with(code)


def say_interrupted_before_any_result():
    say(f"protocol: interrupted ({how()}) before any result; nothing written")
    exit_with(interrupted_exit(signal_received()))


if __name__ == "__main__":
    load_and_run()
