"""What every subcommand shares, decided once.

- Errors: a usage error is one line and exit 2 (`UsageError`, `ConfigError`);
  a run the machine failed (an output that cannot be written, a lost worker) one
  line and exit 4 (`RunFailure`). The codes are protocol/exits.py's.
- The fate of a run (`settle`): a run interrupted exits 128 + the signal, one
  cut short 3 unless a verdict it decided is not as expected (1), and its output
  file is not replaced.
- Output (`output_to`): written to a temporary file beside the target and
  moved into place only when the run produced it, so an existing file
  survives a refusal, an interrupt or a write error. Text going to a file or
  a pipe loses the trailing spaces rich pads table lines with.
- Bounds on every numeric option, derived from the engine and the memory.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from protocol.model.config import ConfigError, parse_constant
from protocol.configurations.named import lookup, named_configurations
from protocol.lifecycle import how, signal_received
from protocol.exits import (  # noqa: F401 - the subcommands take the codes from here
    EXIT_AS_EXPECTED, EXIT_ENVIRONMENT, EXIT_INCOMPLETE, EXIT_NOT_AS_EXPECTED, EXIT_USAGE, RunFailure, interrupted_exit,
    say,
)

# Every command, when the reader of its standard output goes away (`| head`): silently (no
# line: the reader chose to stop), with the environment's code: the output was not all delivered.
EXIT_BROKEN_PIPE = EXIT_ENVIRONMENT


class UsageError(Exception):
    """A usage error: printed as one line, exit 2."""


class Parser(argparse.ArgumentParser):
    help_command: str | None = None  # on the top-level parser: the subcommand named

    def _print_message(self, message, file=None):
        """--help and --version: argparse ignores a failed write (exit 0 into /dev/full); here
        it is one line and exit 4, as for every other output."""
        if not message:
            return
        stream = file or sys.stderr
        try:
            stream.write(message)
            stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise RunFailure(f"cannot write standard output: {error.strerror or error}") from None

    def error(self, message):  # one line, not argparse's usage block
        prog = f"{self.prog} {self.help_command}" if self.help_command else self.prog
        raise UsageError(f"{message} (see `{prog} --help`)")


class ClosedOutput:
    """Standard output when the shell closed it (`cmd >&-`): Python leaves sys.stdout None,
    where print() writes nothing without a word; here the first write is one line and exit 4."""

    encoding = "utf-8"

    REFUSAL = "cannot write standard output: it is closed (>&-); open it, or give --output FILE where the command has one"

    def write(self, text: str) -> int:
        if text:
            raise RunFailure(self.REFUSAL)
        return 0

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(9, "standard output is closed")


def guard_closed_output() -> None:
    """Give a closed standard output a ClosedOutput, and hold its descriptor on /dev/null so
    that no file this run opens (an --output, a worker's pipe) is taken for standard output."""
    if sys.stdout is not None:
        return
    try:
        descriptor = os.open(os.devnull, os.O_WRONLY)
        if descriptor != 1:
            os.close(descriptor)
    except OSError:
        pass
    sys.stdout = ClosedOutput()


def warn(line: str) -> None:
    """One line on standard error; never on standard output, never an error (exits.say)."""
    say(f"protocol: {line}")


# ------------------------------------------------------------------ bounds

def physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 16 << 30


# The most compact store (--fingerprints) keeps about 30 bytes per state
# (docs/checker.md); more states than fit in the memory at that rate cannot
# be kept by any search, so a larger --max-states is a typo, not a plan.
MAX_STATES_LIMIT = physical_memory() // 30
# A DOT or GraphML file of more states is more than any layout tool draws, and
# networkx holds about 1 kB per state and its edges while writing it.
GRAPH_STATES_LIMIT = 1_000_000
# A walk keeps every state it visits, to show it as a trace.
DEPTH_LIMIT = 1_000_000
WALKS_LIMIT = 100_000_000
SEED_LIMIT = 2**64 - 1
JOBS_LIMIT = 2 * (os.cpu_count() or 1)  # more workers than that only share the same CPUs
WORKERS_LIMIT = max(JOBS_LIMIT, 64)  # partitions: a cluster may have more cores than this machine


def whole_number(low: int, high: int, why: str = ""):
    """An argparse type: a whole number in [low, high]; argparse turns the error into one usage line."""
    def parse(text: str) -> int:
        try:
            value = int(text) if len(text.strip()) <= 30 else None
        except ValueError:
            value = None
        if value is None:
            raise argparse.ArgumentTypeError(f"{text[:30]!r} is not a whole number: give {low} <= N <= {high:,}")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{value:,} is out of range: give {low} <= N <= {high:,}" + (f" ({why})" if why else ""))
        return value

    return parse


def add_constants_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-c", "--constant", action="append", default=[], metavar="NAME=VALUE",
        help="override a constant (P, D, MaxTime); repeatable: -c P=3 -c D=2",
    )


def constants_from(args) -> dict:
    """The -c constants; a constant given twice is refused, not silently the last one."""
    constants: dict = {}
    for text in args.constant:
        name, value = parse_constant(text)
        if name in constants and constants[name] != value:
            raise UsageError(f"-c {name} given twice ({name}={constants[name]} and {name}={value}): give it once")
        constants[name] = value
    return constants


def selected_configurations(args) -> list:
    """The named configurations the command names (or all of them), with -c applied."""
    if args.all and args.names:
        raise UsageError("give configuration names or --all, not both")
    if not args.all and not args.names:
        raise UsageError(f"name a configuration or give --all; known: {', '.join(named_configurations())}")
    chosen = list(named_configurations().values()) if args.all else [lookup(n) for n in args.names]
    constants = constants_from(args)
    if not args.all:
        return [named.with_constants(constants) for named in chosen]
    widened, left_out = [], {}
    for named in chosen:  # --all: a configuration the constants refuse is left out, saying so
        try:
            widened.append(named.with_constants(constants))
        except ConfigError as refusal:
            left_out.setdefault(str(refusal), []).append(named.name)
    for refusal, names in left_out.items():  # one line per reason, however many it leaves out
        say(f"left out at these constants: {', '.join(names)}: {refusal}")
    return widened


def workers_count(text: str) -> int:
    """An argparse type: a worker count, or `auto` for the cores this process may use."""
    if text == "auto":
        from protocol.engine.partitioned.search import available_cores

        return available_cores()
    return whole_number(1, WORKERS_LIMIT, "more workers than that only share the same cores")(text)


def add_workers_option(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--workers", type=workers_count, default=1, metavar="N|auto", help=help)


def refuse_together(args, first: str, second: str, why: str = "") -> None:
    """Refuse two options that contradict each other (both truthy in `args`)."""
    names = [first, second]
    values = [getattr(args, name.lstrip("-").replace("-", "_").split()[0]) for name in names]
    if all(values):
        raise UsageError(f"{first} and {second} cannot be given together" + (f": {why}" if why else ""))


# ------------------------------------------------------------------ output

def add_output_option(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--output", metavar="FILE", help=help)


def check_writable(path: str | None, directory: bool = False) -> None:
    """Refuse an --output path that cannot be written, before anything is run or written: a
    file's, or with `directory` a directory's (generate's). A symbolic link, dangling or not,
    is judged by where it leads."""
    if path is None:
        return
    if not path.strip():
        raise UsageError(f"--output was given an empty {'directory' if directory else 'file'} name: give one")
    try:
        target = Path(os.path.realpath(path))  # a symbolic link is written through, to its target
        check_name_length(path, target)
        if target.is_dir() and not directory:
            raise UsageError(f"--output {path} is a directory: give a file name")
        if target.exists() and not target.is_dir() and directory:
            raise UsageError(f"--output {path} is a file: give a directory")
        if not target.parent.is_dir():
            raise UsageError(f"--output {path}: directory {target.parent} does not exist; create it first")
        if not os.access(target.parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
            raise UsageError(f"--output {path} is not writable: choose another file")
    except OSError as error:  # a name in the path longer than the file system takes, a loop of links, ...
        raise UsageError(f"cannot write --output {path}: {error.strerror or error}: give another path") from None


def check_name_length(path: str, target: Path) -> None:
    """Refuse a name the file system cannot hold, or whose temporary file beside it (written first,
    then moved onto it: `partial_prefix`) it cannot: a 249-byte name passes 255 bytes that way."""
    try:
        most = os.pathconf(target.parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        most = 255
    name = len(os.fsencode(target.name))
    extra = len(os.fsencode(partial_prefix(target))) + len("XXXXXXXX.partial") - name  # mkstemp's 8 characters
    if name + extra > most:
        raise UsageError(f"--output {path}: its name is {name} bytes; the file system takes names of at most "
                         f"{most}, and the temporary file written beside it adds {extra}: give a name of at most "
                         f"{most - extra} bytes")


# What a stream that cannot encode our symbols (PYTHONIOENCODING=ascii, a latin-1
# terminal) receives instead: one character for one, so that the tables rich laid
# out stay aligned (rich draws their borders in ASCII there by itself).
ASCII_FALLBACKS = str.maketrans({
    "\u2192": ">", "\u2190": "<", "\u2717": "x", "\u2713": "v", "\u21ba": "@", "\u21bb": "@",
    "\u2013": "-", "\u2014": "-", "\u2026": ".", "\u2039": "<", "\u203a": ">", "\u00ab": "<",
    "\u00bb": ">", "\u2605": "*", "\u00d7": "x", "\u2500": "-", "\u2502": "|", "\u2022": "*",
})


def encodable(text: str, encoding: str | None) -> str:
    """`text` as a stream in `encoding` can take it: the ASCII fallbacks, then '?' for the rest."""
    if not encoding or encoding.lower().replace("-", "").startswith("utf"):
        return text
    try:
        text.encode(encoding)
        return text
    except (UnicodeEncodeError, LookupError):
        pass
    text = text.translate(ASCII_FALLBACKS)
    try:
        return text.encode(encoding, errors="replace").decode(encoding)
    except LookupError:
        return text.encode("ascii", errors="replace").decode("ascii")


# Characters a Sink hands its stream at a time (at most 8 KiB encoded, what a BufferedWriter
# holds whole). One larger write into a pipe whose reader leaves meanwhile (`graph | head -1`)
# is cut by the kernel after what the pipe took, and Python's buffered writer returns that
# count, which its text layer ignores: the rest was dropped without an error and the command
# exited 0. Written a piece at a time, the piece after the reader left fails (BrokenPipeError).
CHUNK = 2048


class Sink:
    """The stream a subcommand writes to: it strips trailing spaces from lines
    going to a file or a pipe, writes ASCII fallbacks where the stream's
    encoding lacks a symbol, remembers whether anything was written, and
    turns a write error into a one-line RunFailure."""

    def __init__(self, stream, where: str, strip: bool, path: str | None = None):
        self.stream, self.where, self.strip, self.path = stream, where, strip, path
        self.encoding_of_stream = getattr(stream, "encoding", None)
        self.written = False
        self.kept = True
        self.pending = ""

    def write(self, text: str) -> int:
        if text:
            self.written = True
        if not self.strip:
            self._raw(text)
            return len(text)
        lines = (self.pending + text).split("\n")
        self.pending = lines.pop()
        if lines:
            self._raw("".join(line.rstrip() + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self.pending.strip() == "":
            pass
        else:
            self._raw(self.pending)
            self.pending = ""
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise RunFailure(f"cannot write {self.where}: {error.strerror or error}") from None

    def _raw(self, text: str) -> None:
        text = encodable(text, self.encoding_of_stream)
        try:
            if len(text) <= CHUNK:
                self.stream.write(text)
                return
            for start in range(0, len(text), CHUNK):  # a long text in pieces, each flushed whole
                self.stream.write(text[start:start + CHUNK])
                self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise RunFailure(f"cannot write {self.where}: {error.strerror or error}") from None

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def isatty(self) -> bool:
        return self.stream.isatty()

    def discard(self) -> None:
        """Do not move what was written into place (the run did not produce it)."""
        self.kept = False

    def __getattr__(self, name):  # encoding, fileno, ... as the stream has them
        return getattr(self.stream, name)


@contextmanager
def output_to(path: str | None):
    """A `Sink` on standard output, or on a temporary file moved onto --output
    `path` when the body ends normally, wrote something and did not `discard`.

    A device or pipe named by --output (/dev/null, /dev/full) is written
    directly: it cannot be replaced by a rename, and holds no file to keep.
    """
    if path is None:
        if isinstance(sys.stdout, ClosedOutput):  # said before the run, not after it
            raise RunFailure(ClosedOutput.REFUSAL)
        sink = Sink(sys.stdout, "standard output", strip=not sys.stdout.isatty())
        yield sink
        sink.flush()
        return
    # A symbolic link is written through: its target gets the new text, the link stays a link.
    target = Path(os.path.realpath(path))
    if target.exists() and not target.is_file():
        stream = open_or_refuse(path, lambda: open(path, "w", encoding="utf-8"))
        with closing_quietly(stream, path):
            sink = Sink(stream, f"--output {path}", strip=True)
            yield sink
            sink.flush()
        return
    sweep_leftovers(target)
    handle, temporary = open_or_refuse(path, lambda: tempfile.mkstemp(
        dir=target.parent, prefix=partial_prefix(target), suffix=".partial"))
    try:
        stream = os.fdopen(handle, "w", encoding="utf-8")
        with closing_quietly(stream, path):
            sink = Sink(stream, f"--output {path}", strip=True, path=path)
            yield sink
            sink.flush()
            try:
                os.fsync(stream.fileno())
            except OSError as error:
                raise RunFailure(f"cannot write --output {path}: {error.strerror}") from None
        if sink.kept and sink.written:
            mode = target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~current_umask()
            os.chmod(temporary, mode)
            os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def partial_prefix(target: Path) -> str:
    """The name a temporary file (or directory) beside `target` starts with: it carries the
    writing process's id, so that one left by a process killed outright (SIGKILL, a power
    cut) is known for a leftover by the next run."""
    return f".{target.name}.{os.getpid()}."


def sweep_leftovers(target: Path) -> None:
    """Remove the temporary files and directories beside `target` whose writer is dead."""
    import glob
    import shutil

    for leftover in target.parent.glob(f".{glob.escape(target.name)}.*.partial"):
        writer = leftover.name[len(target.name) + 2:].split(".", 1)[0]
        if writer.isdigit() and not process_alive(int(writer)):
            try:
                shutil.rmtree(leftover) if leftover.is_dir() and not leftover.is_symlink() else leftover.unlink()
            except OSError:
                pass


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


@contextmanager
def closing_quietly(stream, path: str):
    """Close `stream` after the body; a close that fails (its last flush) is a
    RunFailure, unless the body already failed, whose error is the one to tell."""
    try:
        yield stream
    except BaseException:
        try:
            stream.close()
        except OSError:
            pass
        raise
    try:
        stream.close()
    except OSError as error:
        raise RunFailure(f"cannot write --output {path}: {error.strerror}") from None


def open_or_refuse(path: str, opening):
    try:
        return opening()
    except OSError as error:
        raise UsageError(f"cannot write --output {path}: {error.strerror}") from None


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def make_console(sink=None, width: int | None = None, default_width: int | None = None):
    """The console of a command: width and colour decided by render.terminal's terminal model."""
    from protocol.render.terminal import DEFAULT_WIDTH, console_for

    return console_for(file=sink, width=width, default_width=default_width or DEFAULT_WIDTH)


def wide_console(sink, pipe_width: int):
    """A console on `sink`; a file or pipe has no width, so it gets `pipe_width` unless
    COLUMNS states one (a terminal keeps its own, and the tables fit it)."""
    return make_console(sink, default_width=pipe_width)


# ------------------------------------------------------------------ the fate of a run

def settle(sink, *, complete: bool, as_expected: bool, interrupted: bool = False, why: str = "",
           refuted: bool | None = None, marked: bool = False) -> int:
    """The exit code of a run, decided here for every subcommand (protocol/exits.py's classes).

    0 only when the run went to the end and every verdict is as expected. A run
    interrupted (Ctrl-C, SIGTERM, SIGHUP) exits 128 + the signal, whatever it found.
    A run cut short (--max-states, --stop-on-violation, a skipped configuration)
    exits 3: what it did not decide is unknown, and nothing is derived from an
    unknown; but 1 when a verdict it did decide is not as expected (`refuted`: a
    property violated that should hold), which no longer run could mend. A complete
    run exits 1 when any verdict is not as expected. Only a complete run writes an
    --output file: otherwise the file keeps what the last complete run wrote, and
    the one line says so. The exception is a run cut short but not interrupted whose
    output is `marked` INCOMPLETE on its face (a page: `report`, `check --format html`):
    the bound was the user's, the page says what it is, and standard output gets it too.
    """
    kept = ""
    if sink is not None and sink.path is not None and not complete and marked and not interrupted:
        warn(f"the run was cut short; the page written to {sink.where} is marked INCOMPLETE")
    elif sink is not None and sink.path is not None and (interrupted or not complete):
        sink.discard()
        kept = f"; {sink.where} left as it was" if os.path.exists(sink.path) else f"; nothing written to {sink.where}"
    if interrupted:
        warn(f"interrupted ({how()}): {why or 'the run is incomplete'}{kept}")
    elif kept:
        warn(f"the run is incomplete{kept} (only a complete run writes it)")
    if interrupted:
        return interrupted_exit(signal_received())
    if refuted or (complete and not as_expected):
        return EXIT_NOT_AS_EXPECTED
    return EXIT_AS_EXPECTED if complete else EXIT_INCOMPLETE
