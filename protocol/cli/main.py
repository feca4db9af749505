"""The command line: `python -m protocol check Holds`, `check --all`, `list`, ...

Exit codes, one per class (protocol/exits.py, docs/checker.md "Exit codes"): 0 every
verdict as expected; 1 one is not; 2 a usage error or bad input; 3 the run was cut
short (--max-states, --stop-on-violation, a skipped configuration); 4 the environment
failed it (an output that cannot be written, a reader of standard output that went
away, a lost worker, the memory, a missing module); 128 + the signal when interrupted
(130 Ctrl-C, 143 SIGTERM). Every subcommand ends through `dispatch` and `settle`.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
import traceback

from protocol.exits import EXIT_DEFECT, say
from protocol.model.config import ConfigError
from protocol.engine import ModelError, WorkerLost
from protocol.lifecycle import deferred, how, interrupted, missing_dependency, run_lifecycle, signal_received
from protocol.cli.options import typed
from protocol.cli.common import (
    EXIT_BROKEN_PIPE, EXIT_ENVIRONMENT, EXIT_NOT_AS_EXPECTED, EXIT_USAGE, Parser, RunFailure, UsageError,
    guard_closed_output, interrupted_exit, warn,
)

# name -> (module under protocol/cli/, one-line help). Only the module of
# the subcommand being run is imported; the others appear in --help by this line.
SUBCOMMANDS = {
    "check": ("check", "explore named configurations and compare verdicts with expectations"),
    "list": ("list", "list the named configurations and what they expect"),
    "pin": ("pin", "re-pin the distinct states and depth of named configurations in the manifest"),
    "simulate": ("simulate", "random walks over the model, checking every property at every step"),
    "matrix": ("matrix", "check every combination of the mechanism switches; derive the minimal sets"),
    "graph": ("graph", "export the reachable state graph (dot or graphml)"),
    "bench": ("bench", "measure the search on a ladder of constants (prints figures)"),
    "docs": ("docs", "regenerate or check docs/refutations.md, the golden traces and the quoted figures"),
    "report": ("report", "write one self-contained HTML page of checked configurations, for review"),
    "explore": ("explore", "step through the model's states in a browser (a local web server)"),
    "validate": ("validate", "check that a recorded run (a log or an ITF trace) is a behaviour of the model"),
    "generate": ("generate", "write a small set of shortest runs covering the model, as logs, for testing code"),
}


def version() -> str:
    """The version pyproject.toml gives (the package may run from a checkout, not installed)."""
    from importlib import metadata

    try:
        return metadata.version("protocol")
    except metadata.PackageNotFoundError:
        import re
        from pathlib import Path

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        found = re.search(r'^version = "([^"]+)"', pyproject.read_text(), re.M) if pyproject.exists() else None
        return found.group(1) if found else "unknown"


def build_parser(command: str | None = None) -> Parser:
    """The parser, with the full parser of `command` and a one-line entry for every other."""
    parser = Parser(prog="protocol", description=__doc__.splitlines()[0])
    parser.help_command = command  # an unrecognized argument is that subcommand's to explain
    parser.add_argument("--version", action="version", version=f"protocol {version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, (module, help) in SUBCOMMANDS.items():
        if name == command:
            importlib.import_module(f"protocol.cli.{module}").add_parser(subparsers, name, help)
        else:
            subparsers.add_parser(name, help=help)
    parser.subcommands = subparsers.choices  # name -> its parser, whose options `typed` reads
    return parser


def named_command(argv: list[str]) -> str | None:
    """The subcommand argv names: its first word that is not an option."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in SUBCOMMANDS else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    guard_closed_output()
    try:
        os.getcwd()
    except FileNotFoundError:  # every relative path (an --output, a log, the checkout) is lost
        warn("the current directory no longer exists (deleted or moved): cd to one that does")
        return EXIT_USAGE
    with run_lifecycle():
        try:
            return dispatch(argv)
        except KeyboardInterrupt:  # a signal while the run was saying how it ended (an error's line)
            warn(f"interrupted ({how()})")
            return interrupted_exit(signal_received())


def dispatch(argv: list[str]) -> int:
    try:
        with deferred():  # importing the subcommand's module: see lifecycle.deferred
            parser = build_parser(named_command(argv))
            parsed = parser.parse_args(argv)
        if not getattr(parsed, "run", None):
            raise UsageError("name a command: " + ", ".join(SUBCOMMANDS))
        # The one place a namespace is read: the subcommand gets its typed options (options.py).
        return parsed.run(typed(parsed.command, parser.subcommands[parsed.command], parsed))
    except (UsageError, ConfigError) as error:
        warn(str(error))
        return EXIT_USAGE
    except (RunFailure, WorkerLost) as error:  # no verdict: an output not written, a worker lost
        warn(str(error))
        silence_stdout()
        return EXIT_ENVIRONMENT
    except ModelError as error:  # no verdict: the model breaks a contract, a defect of the model as a verdict is
        warn(str(error))
        silence_stdout()
        return EXIT_NOT_AS_EXPECTED
    except KeyboardInterrupt:  # before any result was there to report
        warn(f"interrupted ({how()}) before any result; nothing written")
        return interrupted_exit(signal_received())
    except ModuleNotFoundError as error:  # imported where first needed (rich, numpy, scipy, ...)
        line = missing_dependency(error)
        if line is None:
            return defect()
        warn(line)
        silence_stdout()
        return EXIT_ENVIRONMENT
    except MemoryError:  # the search outgrew the memory (or a limit set on it): no verdict
        warn("out of memory: the run needs more than this process may have; give --max-states N, "
             "smaller constants, --symmetry or --fingerprints (docs/checker.md)")
        silence_stdout()
        return EXIT_ENVIRONMENT
    except BrokenPipeError:  # the reader went away (`| head`): the rest was never reported
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as error:
        if error.errno not in RESOURCE_ERRORS:
            return defect()
        # a limit of the process (ulimit -n, -u): the run could not start its workers or files
        warn(f"{error.strerror or error}: the run needs more {RESOURCE_ERRORS[error.errno]} than this "
             "process may have; raise the limit or give fewer --jobs / --workers")
        silence_stdout()
        return EXIT_ENVIRONMENT
    except Exception:
        if not interrupted():
            return defect()
        # The signal's KeyboardInterrupt, handed on as another error (Python 3.11 wraps
        # one raised in a class body's __set_name__ while a module loads)
        warn(f"interrupted ({how()}) before any result; nothing written")
        return interrupted_exit(signal_received())


def defect() -> int:
    """An error nothing expects is a defect of the tool: its traceback on stderr, and a code of
    its own (70), so that a CI never reads a crash as a model that changed (1)."""
    say(traceback.format_exc().rstrip("\n"))
    silence_stdout()
    return EXIT_DEFECT


# The limits of a process a run can meet starting workers or opening files, and what it ran out of.
RESOURCE_ERRORS = {errno.EMFILE: "open files", errno.ENFILE: "open files", errno.EAGAIN: "processes"}


def silence_stdout() -> None:
    """Point standard output at /dev/null, so that the final flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture)
        pass
