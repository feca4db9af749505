"""`protocol validate LOG`: is a recorded run (a protocol-log/1 log, or an ITF trace) a
behaviour of the model, and which properties does it violate? (docs/logs.md)

Exit codes: 0 the log is a behaviour and violates nothing; 1 the model cannot
follow it, or it is a behaviour that violates a property; 2 a malformed log or
a usage error (one line naming the line and the problem).
"""

from __future__ import annotations

import json

from protocol.configurations.named import lookup
from protocol.tools.log import LogError, parse, read_text
from protocol.tools.validate import TooAmbiguous, Validation, validate
from protocol.cli.common import EXIT_AS_EXPECTED, EXIT_NOT_AS_EXPECTED, UsageError, make_console, output_to, settle


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help,
        description="Check that a recorded run is a behaviour of the model: an exact breadth-first search "
                    "over the model states consistent with the log so far (silent actions and unobserved "
                    "variables may leave several). Reads protocol-log/1 logs and ITF traces.",
    )
    parser.add_argument("log", metavar="LOG", help="the log (JSON Lines, docs/logs.md) or an ITF trace")
    parser.add_argument("--config", metavar="NAME",
                        help="hold the log against this configuration instead of its header's "
                             "(the log's constants are kept)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (one line)")
    parser.add_argument("--full", action="store_true", help="show every variable of every state of the behaviour")
    parser.set_defaults(run=run)


def run(args) -> int:
    if args.json and args.full:
        raise UsageError("--full applies to the terminal output, not to --json: drop one")
    if args.config is not None:
        lookup(args.config)  # an unknown name is a usage error before the log is read
    try:
        log = parse(read_text(args.log), args.config)
    except LogError as error:
        where = f"{args.log}, line {error.line}" if error.line is not None else args.log
        raise UsageError(f"{where}: {error.problem}") from None
    from protocol.render.validate import Progress

    try:
        with Progress(args.log) as progress:
            result = validate(log, progress=progress.update)
    except TooAmbiguous as error:
        raise UsageError(f"{args.log}, {error}") from None
    with output_to(None) as sink:
        if args.json:
            print(json.dumps(json_record(result, args.log)), file=sink, flush=True)
        else:
            from protocol.render.validate import render_validation

            try:
                render_validation(make_console(sink), result, args.log, full=args.full)
            except KeyboardInterrupt:
                if not sink.written:  # not even the verdict's table (printed first, whole) is out
                    raise
                return settle(sink, complete=False, as_expected=False, interrupted=True,
                              why="the verdict above is complete; its explanation was cut short")
    return exit_code(result)


def exit_code(result: Validation) -> int:
    return EXIT_AS_EXPECTED if result.is_behaviour and not result.violations else EXIT_NOT_AS_EXPECTED


def json_record(result: Validation, path: str) -> dict:
    mismatch = result.mismatch
    record = {
        "log": path,
        "config": result.log.design_name,
        "log_config": result.log.config_name,
        "constants": result.cfg.constants,
        "switches": result.cfg.switches,
        "silent": list(result.log.silent),
        "behaviour": result.is_behaviour,
        "events": result.events,
        "matched": result.matched,
        "mismatch": None,
        "violations": result.violations,
        "possible_violations": result.possible,
        "witnesses": result.witnesses,
        "final_states": result.final_states if result.is_behaviour else None,
        "open_at_end": result.open_at_end if result.is_behaviour else None,
    }
    if mismatch is not None:
        record["mismatch"] = {
            "line": mismatch.line,
            "event": mismatch.event,
            "kind": mismatch.kind,
            "reason": mismatch.reason,
            "states": mismatch.states,
            "enabled": [str(label) for label in mismatch.enabled_labels],
            "nearest": None if mismatch.nearest is None else str(mismatch.nearest),
        }
    return record
