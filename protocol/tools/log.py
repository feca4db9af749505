"""The recorded-run log format `protocol-log/1`, and reading it (docs/logs.md).

A log is JSON Lines. Its first line is a header naming the configuration
the run belongs to (with constants and switches overriding the named
configuration's, as `-c` does) and the actions the recorder does not log
(`silent`); every other line is one event:

- a step: `{"action": "MaintStep", "args": [0], "command": "Compact(1)"}`,
  `command` optional (the command a runtime step popped, as the narration
  writes it, or as an ITF variant);
- an observation of the state at that point of the run:
  `{"observe": {"since": [1, 0], "iq[1]": ["Create(0, 0)"]}}`, any subset of
  the variables, whole or one process's entry, in the values of the ITF
  export (protocol/tools/itf.py); a per-process variable may also be a JSON list
  indexed by process, a per-peek one a list indexed by peek id, a set a
  list, and a command its text.

An ITF trace (this tool's `check --format itf`, or Apalache's or Quint's
with this model's variable names) is read as a log too: its first state is
an observation, and every later state a step (the `#meta` action where the
trace names one, else "some action") followed by an observation of every
variable.

Every problem with the text itself is a `LogError` naming the line: not
JSON, no header, an unknown action or variable, arguments or values out of
range, a file or line too large. Whether the model can follow the events is
for protocol/tools/validate.py to decide.
"""

from __future__ import annotations

import json
import os
from typing import NamedTuple

import attrs

from protocol.model import commands as cmd
from protocol.model import state as schema
from protocol.model import actions as declared  # ACTIONS read when used: a test may add one
from protocol.model.config import CONSTANT_NAMES, SWITCHES, Config, ConfigError, check_constant
from protocol.configurations.named import lookup
from protocol.engine import Label
from protocol.model.state import GLOBAL, Sizes

FORMAT = "protocol-log/1"
# A recorded test run is thousands of lines, not millions: past these bounds a
# file is a mistake (a wrong path, a binary), and holding it would cost memory.
MAX_BYTES = 64 << 20
MAX_LINE_BYTES = 1 << 20
HEADER_KEYS = ("format", "config", "constants", "switches", "silent", "generator")
# What `generate` writes in the header of each run, its mark: the files it may replace or delete
# on its next run. A recorded log leaves it out; validate reads it as any string and ignores it.
GENERATOR = "protocol generate"
STEP_KEYS = ("action", "args", "command")


class LogError(ValueError):
    """A malformed log: one line naming where (`line`) and what is wrong."""

    def __init__(self, line: int | None, problem: str):
        self.line, self.problem = line, problem
        super().__init__(f"line {line}: {problem}" if line is not None else problem)


class StepEvent(NamedTuple):
    line: int
    label: Label | None  # None: some action, unnamed (an ITF state without #meta action)
    command: str | None  # the command the step must pop, as command_text writes it
    state: int | None = None  # in an ITF trace: the index of the state the step leads to

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.state is None else f"state {self.state} (line {self.line})"


class Observation(NamedTuple):
    line: int
    # (variable, process or None for the whole variable, decoded value)
    facts: tuple
    state: int | None = None  # in an ITF trace: the index of the state observed

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.state is None else f"state {self.state} (line {self.line})"

    def holds_in(self, state) -> bool:
        return all(observed_value(state, name, p) == value for name, p, value in self.facts)


def observed_value(state, name: str, p: int | None):
    value = getattr(state, name)
    return value if p is None else value[p]


def fact_text(name: str, p: int | None) -> str:
    return name if p is None else f"{name}[{p}]"


@attrs.frozen
class Log:
    """A parsed log: the configuration its header names, and its events in order."""

    config_name: str  # as the header (or the ITF source) names it
    config: Config  # the header's: what the events were read and checked against
    silent: tuple  # action names
    events: tuple  # of StepEvent | Observation
    source: str  # "log" or "itf"
    # --config: the design to hold the log against instead (at the log's constants), and its name
    against: Config | None = None
    against_name: str | None = None
    notes: tuple = ()  # what the reader assumed (an ITF lasso read as a run that stops)

    @property
    def design(self) -> Config:
        return self.against or self.config

    @property
    def design_name(self) -> str:
        return self.against_name or self.config_name


# ------------------------------------------------------------------ reading


def read_text(path: str) -> str:
    """The file's text (`-`: standard input), refused when it is too large to be a log or is
    not UTF-8. A FIFO with no writer is an empty log, not a wait for ever."""
    import sys

    where = "standard input" if path == "-" else path
    try:
        if path == "-":
            if sys.stdin is None:
                raise LogError(None, "standard input is closed: give the log's file name")
            raw = sys.stdin.buffer.read(MAX_BYTES + 1)
        else:
            raw = read_bytes(path)
    except OSError as error:
        raise LogError(None, f"cannot read {where}: {error.strerror or error}") from None
    if len(raw) > MAX_BYTES:
        raise LogError(None, f"{where} holds more than the {MAX_BYTES:,} bytes a log may have: "
                             "split the run into several logs")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        raise LogError(line, "is not UTF-8 text: a log is JSON Lines") from None


def read_bytes(path: str) -> bytes:
    """At most MAX_BYTES + 1 bytes of `path`. A FIFO is opened without waiting for a writer
    (with none, it reads as empty), then read as any file."""
    import fcntl
    import stat

    if os.path.isdir(path):
        raise IsADirectoryError(21, "it is a directory")
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with open(descriptor, "rb", closefd=True) as handle:
        if stat.S_ISREG(os.fstat(descriptor).st_mode) and os.fstat(descriptor).st_size > MAX_BYTES:
            return b"x" * (MAX_BYTES + 1)  # refused by size without reading it
        flags = fcntl.fcntl(descriptor, fcntl.F_GETFL)
        fcntl.fcntl(descriptor, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        return handle.read(MAX_BYTES + 1)


def parse(text: str, config_name: str | None = None) -> Log:
    """The log (or ITF trace) `text` holds; `config_name` holds it against another design."""
    lines = text.split("\n")
    first = next(((n, line) for n, line in enumerate(lines, 1) if line.strip()), None)
    if first is None:
        raise LogError(1, f"the log is empty: its first line must be the header {{\"format\": \"{FORMAT}\", ...}}")
    document = _itf_document(text, first[1], first[0])
    if document is not None:  # one document, bounded by MAX_BYTES alone (Quint writes it on one line)
        return parse_itf(document, config_name, first[0])
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE_BYTES:
            raise LogError(number, f"is {len(line):,} characters, more than the {MAX_LINE_BYTES:,} a line may have")
    header = _json_object(first[1], first[0])
    if header.get("format") != FORMAT:
        raise LogError(first[0], f"is not a header: the first line must be {{\"format\": \"{FORMAT}\", "
                                 "\"config\": NAME, ...}")
    name, cfg, silent = read_header(header, first[0])
    labels = Vocabulary(cfg)
    events = []
    for number, line in enumerate(lines[first[0]:], first[0] + 1):
        if line.strip():
            events.append(read_event(_json_object(line, number), number, cfg, labels))
    return against(Log(name, cfg, silent, tuple(events), "log"), config_name, first[0])


def against(log: Log, config_name: str | None, number: int) -> Log:
    """The log held against configuration `config_name` (its switches, the log's constants)."""
    if config_name is None:
        return log
    try:
        named = lookup(config_name)
        return attrs.evolve(log, against=named.config.evolve(**log.config.constants), against_name=named.name)
    except ConfigError as error:
        raise LogError(number, f"--config {config_name}: {error}") from None


# JSON's names for what json.loads returns, for a line that is not an object.
JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


class DuplicateKey(ValueError):
    """A JSON object naming one key twice: json keeps the last silently, so the line would mean
    one thing here and perhaps another to the tool that wrote it."""

    def __init__(self, key: str):
        self.key = key
        super().__init__(key)


def unique_keys(pairs: list) -> dict:
    """json's `object_pairs_hook`: the object, or DuplicateKey for a key named twice."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen = set()
        raise DuplicateKey(next(key for key, _ in pairs if key in seen or seen.add(key)))
    return found


def loads(text: str):
    """json.loads, refusing an object that names a key twice (DuplicateKey)."""
    return json.loads(text, object_pairs_hook=unique_keys)


def json_value(text: str, number: int):
    """`text` as JSON, or a LogError naming the line: not JSON, an object naming a key twice,
    nested too deeply, or a number too long to be any value of the model (Python refuses
    over 4,300 digits)."""
    try:
        return loads(text)
    except json.JSONDecodeError as error:
        raise LogError(number, f"is not JSON ({error.msg}, column {error.colno})") from None
    except DuplicateKey as error:
        raise LogError(number, f"names the key {json.dumps(error.key)[:60]} twice in one object: JSON readers "
                               "differ on which one counts, so give it once") from None
    except RecursionError:
        raise LogError(number, "is nested too deeply to be an event") from None
    except ValueError:  # int() past sys.get_int_max_str_digits(): no time, id or frontier is that long
        raise LogError(number, "holds a number of thousands of digits: no value of the model is that large") from None


def _json_object(line: str, number: int) -> dict:
    value = json_value(line, number)
    if not isinstance(value, dict):
        raise LogError(number, f"is a JSON {JSON_TYPES.get(type(value), 'value')}, not an object")
    return value


def read_header(header: dict, number: int) -> tuple[str, Config, tuple]:
    unknown = sorted(set(header) - set(HEADER_KEYS))
    if unknown:
        raise LogError(number, f"the header has unknown key {unknown[0]!r}: the keys are {', '.join(HEADER_KEYS)}")
    if not isinstance(header.get("generator", ""), str):
        raise LogError(number, "\"generator\" must be a string (generate writes \"protocol generate\")")
    name = header.get("config")
    if not isinstance(name, str):
        raise LogError(number, "the header names no configuration: add \"config\": NAME (see `list`)")
    try:
        named = lookup(name)
    except ConfigError as error:
        raise LogError(number, str(error)) from None
    constants, switches = header.get("constants", {}), header.get("switches", {})
    if not isinstance(constants, dict) or not isinstance(switches, dict):
        raise LogError(number, "\"constants\" and \"switches\" must be JSON objects")
    for key in constants:
        if key not in CONSTANT_NAMES:
            raise LogError(number, f"unknown constant {key!r}: the constants are {', '.join(CONSTANT_NAMES)}")
    for key in switches:
        if key not in SWITCHES:
            raise LogError(number, f"unknown switch {key!r}: the switches are {', '.join(SWITCHES)}")
    try:
        for key, value in constants.items():
            check_constant(key, value)
        cfg = named.config.evolve(**constants, **switches)
    except (ConfigError, TypeError) as error:
        raise LogError(number, str(error)) from None
    return named.name, cfg, read_silent(header.get("silent", []), number)


def read_silent(silent, number: int) -> tuple:
    known = [action.name for action in declared.ACTIONS]
    if not isinstance(silent, list) or not all(isinstance(name, str) for name in silent):
        raise LogError(number, "\"silent\" must be a list of action names")
    for name in silent:
        if name not in known:
            raise LogError(number, f"unknown silent action {name!r}: the actions are {', '.join(known)}")
    return tuple(silent)


class Vocabulary:
    """The action instances of a configuration, by name, to check a step's label against. An
    action's instances are listed when a step first names it, not for every action of the
    header's constants (a header-only log with a large MaxTime lists none)."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.actions = {action.name: action for action in declared.ACTIONS}
        self.by_name: dict = {}  # name -> ([Label, ...] in order, {Label, ...})

    def instances(self, name: str) -> tuple[list, set]:
        if name not in self.by_name:
            action = self.actions[name]
            listed = [Label(name, *args) for args, _ in action.parameters(self.cfg)] if action.where(self.cfg) else []
            self.by_name[name] = (listed, set(listed))
        return self.by_name[name]

    def label(self, name, args, number: int) -> Label:
        if not isinstance(name, str) or name not in self.actions:
            shown = repr(name) if isinstance(name, str) else json.dumps(name)[:60]
            raise LogError(number, f"unknown action {shown}: the actions are {', '.join(self.actions)}")
        if not isinstance(args, list) or not all(_whole(a) for a in args):
            raise LogError(number, f"{name}'s \"args\" must be a list of whole numbers")
        label = Label(name, *args)
        instances, known = self.instances(name)
        if instances and label not in known:
            arity = len(instances[0].args)
            if len(args) != arity:
                raise LogError(number, f"{name} takes {arity} argument{'s' if arity != 1 else ''}, "
                                       f"not {len(args)} (for example {instances[0]})")
            raise LogError(number, f"{label}'s arguments are out of range for this configuration's constants "
                                   f"(from {instances[0]} to {instances[-1]})")
        return label  # an action this configuration lacks is the validator's mismatch, not malformed


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_event(event: dict, number: int, cfg: Config, labels: Vocabulary):
    if "observe" in event:
        if set(event) != {"observe"}:
            raise LogError(number, "an observation holds only \"observe\": put a step on its own line")
        return Observation(number, read_facts(event["observe"], number, cfg))
    if "action" not in event:
        raise LogError(number, "is neither a step ({\"action\": ...}) nor an observation ({\"observe\": ...})")
    unknown = sorted(set(event) - set(STEP_KEYS))
    if unknown:
        raise LogError(number, f"a step has unknown key {unknown[0]!r}: the keys are {', '.join(STEP_KEYS)}")
    label = labels.label(event["action"], event.get("args", []), number)
    command = event.get("command")
    if command is not None and label.name not in RUNTIME_STEPS:
        raise LogError(number, f"{label.name} pops no command: only {' and '.join(RUNTIME_STEPS)} "
                               "steps may name one")
    return StepEvent(number, label, None if command is None else read_command_text(command, number))


# The steps that pop a command off a runtime's queue (the others name none).
RUNTIME_STEPS = ("MaintStep", "InterStep")


def read_command_text(command, number: int) -> str:
    """A step's `command`, as the narration writes it; an ITF variant is read too. Either
    must be a command of a known kind with its number of arguments."""
    try:
        variant = command_variant(command) if isinstance(command, str) else command
        return cmd.command_text(cmd.command_from_itf(variant))
    except (KeyError, TypeError, AttributeError, ValueError):
        kinds = ", ".join(cmd.KINDS)
        raise LogError(number, f"\"command\" {json.dumps(command)[:60]} is not a command: give its text "
                               f"(\"Compact(1)\") or its ITF variant, of a kind among {kinds}") from None


# ------------------------------------------------------------ observations


def read_facts(observed, number: int, cfg: Config) -> tuple:
    if not isinstance(observed, dict) or not observed:
        raise LogError(number, "\"observe\" must be a non-empty object of variables")
    facts = []
    for key, encoded in observed.items():
        name, p = split_key(key, number, cfg)
        facts.append((name, p, decode(name, p, encoded, number, cfg)))
    return tuple(facts)


def split_key(key: str, number: int, cfg: Config) -> tuple[str, int | None]:
    name, bracket, rest = key.partition("[")
    variable = schema.BY_NAME.get(name)
    if variable is None or not variable.where(cfg):
        known = ", ".join(v.name for v in schema.VARIABLES if v.where(cfg))
        raise LogError(number, f"unknown variable {name!r} in an observation: this configuration's are {known}")
    if not bracket:
        return name, None
    if variable.scope == GLOBAL:
        raise LogError(number, f"{name} is global: observe it whole, not {key}")
    index = rest[:-1]
    if not rest.endswith("]") or not (index.isascii() and index.isdigit()) or len(index) > 6 or int(index) >= cfg.P:
        raise LogError(number, f"{key}: the process must be 0..{cfg.P - 1}, as in {name}[0]")
    return name, int(rest[:-1])


def decode(name: str, p: int | None, encoded, number: int, cfg: Config):
    """An observed value in the model's own terms, checked against the variable's domain."""
    variable = schema.BY_NAME[name]
    try:
        if variable.scope == GLOBAL or p is not None:
            return decode_one(variable, encoded, cfg)
        per_process = encoded if isinstance(encoded, list) else by_process(encoded["#map"], cfg.P)
        if len(per_process) != cfg.P:
            raise NotInDomain(f"has {len(per_process)} entries for {cfg.P} processes")
        return tuple(decode_one(variable, v, cfg) for v in per_process)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
        said = str(error) if isinstance(error, NotInDomain) else ""
        why = f" ({said})" if said and said != NOT_IN_DOMAIN else ""
        raise LogError(number, f"{fact_text(name, p)} = {json.dumps(encoded)[:60]} is not a value of its domain "
                               f"in the ITF encoding{why} (docs/logs.md)") from None


NOT_IN_DOMAIN = "is not a value of its domain"


class NotInDomain(ValueError):
    """What is wrong with an observed value, in our words (Python's own ValueErrors, such as
    int()'s, are not shown: they name Python's internals, not the log's problem)."""


def by_process(pairs, P: int) -> list:
    """A per-process `#map`'s values in process order: its keys must be 0..P-1, each once."""
    keyed = dict((schema.itf_number(key), value) for key, value in pairs)
    if len(keyed) != len(pairs) or not all(_whole(key) for key in keyed) or set(keyed) != set(range(P)):
        raise NotInDomain(f"its keys must be the processes 0..{P - 1}, each once")
    return [keyed[p] for p in range(P)]


def decode_one(variable, encoded, cfg: Config):
    """One value of `variable` (one process's, for a per-process one), in range."""
    sizes = Sizes(cfg.P, cfg.D)
    problem = NOT_IN_DOMAIN
    for form in lenient_forms(variable.domain, encoded):
        try:
            value = variable.domain.from_itf(form, sizes)
        except (KeyError, TypeError, AttributeError, IndexError):
            continue
        problem = variable.domain.problem(value, cfg)
        if problem is None:
            return value
    raise NotInDomain(problem)


def lenient_forms(domain, encoded) -> list:
    """The ITF forms a value written in a log's shorter forms may stand for, to try in turn: a
    queue's command texts as variants; any other list as a function of its index (a value per
    process, peek or index id), else as a set; null as ⊥ (a frontier entry that may be absent,
    as `standing[p]` with `index = created`)."""
    if encoded is None:
        return [BOTTOM_VARIANT]
    if not isinstance(encoded, list):
        return [encoded]
    if isinstance(domain, schema.Queue):
        return [[command_variant(c) if isinstance(c, str) else c for c in encoded]]
    if isinstance(domain, schema.PartialMap):  # no list form: [0] would read as {0: 0}, a reader at 0
        raise NotInDomain("a partial map is written {\"#map\": [[d, t], ...]}, its present entries only, "
                          "not as a list")
    return [encoded, {"#map": [[index, v] for index, v in enumerate(encoded) if v is not None]}, {"#set": encoded}]


# ⊥ in the ITF encoding (protocol/model/state.py writes it so): a log may also write null.
BOTTOM_VARIANT = {"tag": "Bottom", "value": {"#tup": []}}


def command_variant(text: str) -> dict:
    """`"Compact(1)"` as the ITF variant of its kind (either of the kind's field lists); a command
    carrying the epoch it was sent in (spec 12.6, `hello = silent`) is written `"Compact(1)@0"`."""
    text, at, epoch = text.partition("@")
    if at:
        if not (epoch.isascii() and epoch.isdigit()) or len(epoch) > 30:
            raise NotInDomain(f"{text[:40]}@{epoch[:30]}: the epoch after @ must be a whole number")
        variant = command_variant(text)
        return {**variant, "value": {**variant["value"], "epoch": int(epoch)}}
    name, _, rest = text.partition("(")
    kind = cmd.KINDS.get(name.strip())
    if kind is None:
        raise NotInDomain(f"{name.strip()[:40] or text[:40]!r} is not a command the model has: its commands are "
                          f"{', '.join(cmd.KINDS)}")
    if rest and not rest.endswith(")"):
        raise NotInDomain(f"{text} does not end with ')'")
    args = [int(a) for a in rest[:-1].split(",") if a.strip()] if rest else []
    if any(len(a.strip()) > 30 for a in rest.split(",")):
        raise NotInDomain(f"{text[:40]} has an argument too long to be a number of the model")
    names = kind.indexed_fields if len(args) == len(kind.indexed_fields) != len(kind.fields) else kind.fields
    if len(names) != len(args):
        raise NotInDomain(f"{text} has {len(args)} arguments, not {len(names)}")
    return {"tag": kind.name, "value": dict(zip(names, args))}


# ----------------------------------------------------------------------- ITF


def _itf_document(text: str, first_line: str, number: int):
    """The ITF document `text` holds (one per line, or one pretty-printed), or None for a log."""
    try:
        value = loads(first_line)
    except (json.JSONDecodeError, RecursionError):
        try:
            value = loads(text)
        except (json.JSONDecodeError, RecursionError):
            return None
        except ValueError:
            json_value(text, number)  # a key named twice, the number too long: its LogError
    except ValueError:
        json_value(first_line, number)
    if isinstance(value, dict) and "states" in value and "format" not in value:
        return value
    return None


def parse_itf(document: dict, config_name: str | None, number: int) -> Log:
    meta = document.get("#meta", {}) if isinstance(document.get("#meta"), dict) else {}
    name = meta.get("source") or config_name
    if not isinstance(name, str) or not name:
        raise LogError(number, "an ITF trace names no configuration (#meta source): give --config NAME")
    try:
        named = lookup(name)
    except ConfigError as error:
        if not config_name:
            raise LogError(number, f"ITF source: {error}: give --config NAME") from None
        named = lookup(config_name)  # a foreign tool's source (a file name): --config names the design
    states = document["states"]
    if not isinstance(states, list) or not states or not all(isinstance(s, dict) for s in states):
        raise LogError(number, "an ITF trace's \"states\" must be a non-empty list of objects")
    cfg = itf_config(named.config, states[0], number)
    labels = Vocabulary(cfg)
    events = []
    for index, encoded in enumerate(states):
        if index:
            action = encoded.get("#meta", {}).get("action") if isinstance(encoded.get("#meta"), dict) else None
            if action is not None and not isinstance(action, dict):
                raise LogError(number, f"state {index}: #meta action must be an object "
                                       "{\"name\": ..., \"args\": [...]}, not a JSON "
                                       f"{JSON_TYPES.get(type(action), 'value')}")
            label = None if action is None else labels.label(action.get("name"), action.get("args", []), number)
            events.append(StepEvent(number, label, None, index))
        # Quint's --mbt adds what it picked (mbt::actionTaken, mbt::nondetPicks): not the model's
        observed = {key: value for key, value in encoded.items() if key != "#meta" and not key.startswith("mbt::")}
        try:
            facts = read_facts(observed, number, cfg)
        except LogError as error:
            raise LogError(number, f"state {index}: {error.problem}") from None
        events.append(Observation(number, facts, index))
    notes = ()
    loop = document.get("loop")
    if isinstance(loop, int) and not meta.get("stutters") and loop != len(states) - 1:
        notes = (f"the trace is a lasso back to state {loop}; it is read as a run that stops at its last state",)
    return against(Log(named.name, cfg, (), tuple(events), "itf", notes=notes), config_name, number)


def itf_config(base: Config, first: dict, number: int) -> Config:
    """The configuration at the trace's own P and D (read off its first state's shape)."""
    try:
        P = len(first["since"]["#map"])
        D = len(first["df"]["#map"])
        return base.evolve(P=P, D=D)
    except (KeyError, TypeError):
        raise LogError(number, "an ITF trace's first state must hold since and df (the model's variables)") from None
    except ConfigError as error:
        raise LogError(number, str(error)) from None


# ------------------------------------------------------------------ writing


def header_line(name: str, cfg: Config, silent=(), generator: str | None = None) -> str:
    header = {"format": FORMAT, "config": name, "constants": cfg.constants,
              "switches": {key: getattr(cfg, key) for key in SWITCHES}, "silent": list(silent)}
    if generator is not None:
        header["generator"] = generator
    return json.dumps(header)


def step_line(label: Label, command: tuple | None = None) -> str:
    event = {"action": label.name, "args": list(label.args)}
    if command is not None:
        event["command"] = cmd.command_text(command)
    return json.dumps(event)


def observation_line(facts: dict) -> str:
    return json.dumps({"observe": facts})


def encode(state, name: str, p: int | None):
    """The ITF value of one variable (or one process's entry of it) of `state`."""
    variable = schema.BY_NAME[name]
    value = getattr(state, name)
    if variable.scope == GLOBAL or p is not None:
        return variable.domain.to_itf(value if p is None else value[p])
    return schema.itf_map((q, variable.domain.to_itf(v)) for q, v in enumerate(value))
