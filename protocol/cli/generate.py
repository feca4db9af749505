"""`protocol generate NAME --output DIR`: the runs that test an implementation, as logs.

A small set of shortest runs that together reach every action instance, every
command kind applied by every runtime, every leads-to premise, and a
refutation's counterexample (docs/logs.md). DIR gets `run-01.jsonl`, ... and
`coverage.json`, and only when the whole set was made: the files are written
to a temporary directory beside DIR and moved into place at the end.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from protocol.model import actions as declared  # ACTIONS read when used: a test may add one
from protocol.configurations.named import lookup
from protocol.tools.generate import Coverage, generate, run_log
from protocol.tools.log import FORMAT, GENERATOR
from protocol.cli.common import (
    EXIT_AS_EXPECTED, RunFailure, UsageError, add_constants_option, check_writable, constants_from, current_umask,
    make_console,
    output_to, partial_prefix, sweep_leftovers,
)

RUN_FILE = re.compile(r"run-[0-9]{2,}\.jsonl")
REPORT_KEYS = {"config", "constants", "switches", "silent", "distinct_states", "runs", "covered", "unreachable"}


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help,
        description="Write a small set of shortest runs of the model that together cover every action "
                    "instance, every command kind each runtime applies, every leads-to premise and a "
                    "refutation's counterexample, as protocol-log/1 logs, with a coverage report.",
    )
    parser.add_argument("name", metavar="NAME", help="a configuration name (see `list`)")
    add_constants_option(parser)
    parser.add_argument("--output", metavar="DIR", required=True,
                        help="the directory to write the runs to (created; an earlier generate's files replaced)")
    parser.add_argument("--silent", action="append", default=[], metavar="ACTION",
                        help="leave this action out of the logs, as a recorder that does not see it would "
                             "(repeatable: --silent Publish --silent Ingest)")
    parser.add_argument("--no-observe", action="store_true",
                        help="write the steps only, no observations of the variables they change")
    parser.add_argument("--json", action="store_true", help="print the coverage report as one JSON object")
    parser.set_defaults(run=run)


def refuse_bad_arguments(args) -> None:
    known = [action.name for action in declared.ACTIONS]
    for name in args.silent:
        if name not in known:
            raise UsageError(f"--silent {name}: unknown action; the actions are {', '.join(known)}")
    check_writable(args.output, directory=True)  # as check refuses its --output, a dangling link's included
    target = Path(args.output)
    if target.is_dir():
        foreign = sorted(p.name for p in target.iterdir() if not written_by_generate(p))
        if foreign:
            raise UsageError(f"--output {args.output} holds {foreign[0]}, which generate did not write: "
                             "give an empty or new directory")


def written_by_generate(path: Path) -> bool:
    """Whether `path` is a file an earlier generate wrote, judged by its content, not only its
    name: a run's first line is a log header carrying generate's own mark (`"generator"`: every
    recorded log has the header, not the mark), coverage.json is the coverage report."""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 20)
        if RUN_FILE.fullmatch(path.name):
            header = json.loads(head.split(b"\n", 1)[0])
            return isinstance(header, dict) and header.get("format") == FORMAT and header.get("generator") == GENERATOR
        if path.name == "coverage.json":
            report = json.loads(head)
            return isinstance(report, dict) and REPORT_KEYS <= set(report)
    except (OSError, ValueError, RecursionError):
        return False
    return False


def run(args) -> int:
    named = lookup(args.name).with_constants(constants_from(args))
    refuse_bad_arguments(args)
    coverage = generate(named)
    files = {run_name(index): run_log(named.name, named.config, run.steps, tuple(args.silent),
                                      observe=not args.no_observe)
             for index, run in enumerate(coverage.runs)}
    report = json_report(coverage, args.silent)
    # the file holds what the runs cover, not how long finding them took: a second run at the
    # same constants writes the same bytes
    files["coverage.json"] = json.dumps({k: v for k, v in report.items() if k != "seconds"}, indent=1) + "\n"
    write_directory(Path(args.output), files)
    with output_to(None) as sink:
        if args.json:
            print(json.dumps(report), file=sink, flush=True)
        else:
            from protocol.render.generate import render_coverage

            render_coverage(make_console(sink), coverage, args.output, [run_name(i) for i in range(len(coverage.runs))])
    return EXIT_AS_EXPECTED


def run_name(index: int) -> str:
    return f"run-{index + 1:02d}.jsonl"


def write_directory(target: Path, files: dict) -> None:
    """Write `files` into `target` all at once: into a fresh directory beside it, then swapped in.
    A symbolic link is written through: its target directory is the one replaced."""
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    parent = target.parent if str(target.parent) else Path(".")
    sweep_leftovers(target)
    try:
        fresh = Path(tempfile.mkdtemp(dir=parent, prefix=partial_prefix(target), suffix=".partial"))
    except OSError as error:
        raise UsageError(f"cannot write --output {target}: {error.strerror}") from None
    old = None
    try:
        for name, text in files.items():
            with open(fresh / name, "w", encoding="utf-8") as handle:
                handle.write(text)
        os.chmod(fresh, 0o777 & ~current_umask())
        if target.exists():
            old = parent / f".{target.name}.old-{os.getpid()}"
            os.replace(target, old)
        os.replace(fresh, target)
    except OSError as error:
        if old is not None and not target.exists():
            os.replace(old, target)
        raise RunFailure(f"cannot write --output {target}: {error.strerror or error}") from None
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def json_report(coverage: Coverage, silent) -> dict:
    cfg = coverage.named.config
    return {
        "config": coverage.named.name,
        "constants": cfg.constants,
        "switches": cfg.switches,
        "silent": list(silent),
        "distinct_states": coverage.distinct_states,
        "runs": [{"file": run_name(index), "states": len(run.steps), "made_for": str(run.first),
                  "counterexample": run.counterexample, "covers": [str(t) for t in run.covers]}
                 for index, run in enumerate(coverage.runs)],
        "covered": {str(target): run_name(index) for target, index in coverage.covered.items()},
        "unreachable": [str(target) for target in coverage.unreachable],
        "seconds": round(coverage.seconds, 3),
    }
