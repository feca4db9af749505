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
from protocol.model.actions import ACTIONS
from protocol.model.config import CONSTANT_NAMES, SWITCHES, Config, ConfigError, check_constant, lookup
from protocol.engine import Label
from protocol.model.state import GLOBAL, Sizes

FORMAT = "protocol-log/1"
# A recorded test run is thousands of lines, not millions: past these bounds a
# file is a mistake (a wrong path, a binary), and holding it would cost memory.
MAX_BYTES = 64 << 20
MAX_LINE_BYTES = 1 << 20
HEADER_KEYS = ("format", "config", "constants", "switches", "silent")
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
    """The file's text, refused when it is too large to be a log or is not UTF-8."""
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise LogError(None, f"{path} is {size:,} bytes, more than the {MAX_BYTES:,} a log may have: "
                                 "split the run into several logs")
        with open(path, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise LogError(None, f"cannot read {path}: {error.strerror}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        raise LogError(line, "is not UTF-8 text: a log is JSON Lines") from None


def parse(text: str, config_name: str | None = None) -> Log:
    """The log (or ITF trace) `text` holds; `config_name` holds it against another design."""
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE_BYTES:
            raise LogError(number, f"is {len(line):,} characters, more than the {MAX_LINE_BYTES:,} a line may have")
    first = next(((n, line) for n, line in enumerate(lines, 1) if line.strip()), None)
    if first is None:
        raise LogError(1, f"the log is empty: its first line must be the header {{\"format\": \"{FORMAT}\", ...}}")
    document = _itf_document(text, first[1])
    if document is not None:
        return parse_itf(document, config_name, first[0])
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


def _json_object(line: str, number: int) -> dict:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise LogError(number, f"is not JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise LogError(number, "is nested too deeply to be an event") from None
    if not isinstance(value, dict):
        raise LogError(number, f"is a JSON {type(value).__name__}, not an object")
    return value


def read_header(header: dict, number: int) -> tuple[str, Config, tuple]:
    unknown = sorted(set(header) - set(HEADER_KEYS))
    if unknown:
        raise LogError(number, f"the header has unknown key {unknown[0]!r}: the keys are {', '.join(HEADER_KEYS)}")
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
    known = [action.name for action in ACTIONS]
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
        self.actions = {action.name: action for action in ACTIONS}
        self.by_name: dict = {}  # name -> ([Label, ...] in order, {Label, ...})

    def instances(self, name: str) -> tuple[list, set]:
        if name not in self.by_name:
            action = self.actions[name]
            listed = [Label(name, *args) for args, _ in action.parameters(self.cfg)] if action.exists(self.cfg) else []
            self.by_name[name] = (listed, set(listed))
        return self.by_name[name]

    def label(self, name, args, number: int) -> Label:
        if name not in self.actions:
            raise LogError(number, f"unknown action {name!r}: the actions are {', '.join(self.actions)}")
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
    return StepEvent(number, label, None if command is None else read_command_text(command, number))


def read_command_text(command, number: int) -> str:
    """A step's `command`, as the narration writes it; an ITF variant is read too."""
    if isinstance(command, str):
        return command.replace(" ", "").replace(",", ", ")
    try:
        return cmd.command_text(cmd.command_from_itf(command))
    except (KeyError, TypeError, AttributeError):
        raise LogError(number, f"\"command\" {json.dumps(command)[:60]} is neither a command's text "
                               "(\"Compact(1)\") nor an ITF variant") from None


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
    if variable is None or not variable.present(cfg):
        known = ", ".join(v.name for v in schema.VARIABLES if v.present(cfg))
        raise LogError(number, f"unknown variable {name!r} in an observation: this configuration's are {known}")
    if not bracket:
        return name, None
    if variable.scope == GLOBAL:
        raise LogError(number, f"{name} is global: observe it whole, not {key}")
    if not rest.endswith("]") or not rest[:-1].isdigit() or int(rest[:-1]) >= cfg.P:
        raise LogError(number, f"{key}: the process must be 0..{cfg.P - 1}, as in {name}[0]")
    return name, int(rest[:-1])


def decode(name: str, p: int | None, encoded, number: int, cfg: Config):
    """An observed value in the model's own terms, checked against the variable's domain."""
    variable = schema.BY_NAME[name]
    try:
        if variable.scope == GLOBAL or p is not None:
            return decode_one(variable, encoded, cfg)
        per_process = encoded if isinstance(encoded, list) else [v for _, v in sorted(
            (schema.itf_number(k), v) for k, v in encoded["#map"])]
        if len(per_process) != cfg.P:
            raise ValueError(f"has {len(per_process)} entries for {cfg.P} processes")
        return tuple(decode_one(variable, v, cfg) for v in per_process)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
        why = f" ({error})" if isinstance(error, ValueError) and str(error) else ""
        raise LogError(number, f"{fact_text(name, p)} = {json.dumps(encoded)[:60]} is not a value of its domain "
                               f"in the ITF encoding{why} (docs/logs.md)") from None


def decode_one(variable, encoded, cfg: Config):
    """One value of `variable` (one process's, for a per-process one), in range."""
    sizes = Sizes(cfg.P, cfg.D)
    problem = "is not a value of its domain"
    for form in lenient_forms(variable.domain, encoded):
        try:
            value = variable.domain.from_itf(form, sizes)
        except (KeyError, TypeError, AttributeError, IndexError):
            continue
        problem = variable.domain.problem(value, cfg)
        if problem is None:
            return value
    raise ValueError(problem)


def lenient_forms(domain, encoded) -> list:
    """The ITF forms a value written in a log's shorter forms may stand for, to try in turn: a
    queue's command texts as variants; any other list as a function of its index (a value per
    process, peek or index id), else as a set."""
    if not isinstance(encoded, list):
        return [encoded]
    if isinstance(domain, schema.Queue):
        return [[command_variant(c) if isinstance(c, str) else c for c in encoded]]
    return [encoded, {"#map": [[index, v] for index, v in enumerate(encoded) if v is not None]}, {"#set": encoded}]


def command_variant(text: str) -> dict:
    """`"Compact(1)"` as the ITF variant of its kind (either of the kind's field lists)."""
    name, _, rest = text.partition("(")
    kind = cmd.KINDS[name.strip()]
    args = [int(a) for a in rest.rstrip(")").split(",") if a.strip()] if rest else []
    names = kind.indexed_fields if len(args) == len(kind.indexed_fields) != len(kind.fields) else kind.fields
    if len(names) != len(args):
        raise ValueError(f"{text} has {len(args)} arguments, not {len(names)}")
    return {"tag": kind.name, "value": dict(zip(names, args))}


# ----------------------------------------------------------------------- ITF


def _itf_document(text: str, first_line: str):
    """The ITF document `text` holds (one per line, or one pretty-printed), or None for a log."""
    try:
        value = json.loads(first_line)
    except (json.JSONDecodeError, RecursionError):
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return None
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
            label = None if action is None else labels.label(action.get("name"), action.get("args", []), number)
            events.append(StepEvent(number, label, None, index))
        observed = {key: value for key, value in encoded.items() if key != "#meta"}
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


def header_line(name: str, cfg: Config, silent=()) -> str:
    return json.dumps({"format": FORMAT, "config": name, "constants": cfg.constants,
                       "switches": {key: getattr(cfg, key) for key in SWITCHES}, "silent": list(silent)})


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
