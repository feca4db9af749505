"""`protocol docs --write | --check`: the files derived from protocol/configurations/
(docs/refutations.md, the golden traces, and the manifest's figures README.md
and docs/ quote), in the project's checkout."""

from __future__ import annotations

import difflib

from protocol.apps.docs import (
    PACKAGE_ROOT, REGENERATE, DocsError, derived_files, find_checkout, orphan_traces, shown_path, stored,
)
from protocol.lifecycle import how, signal_received
from protocol.cli.common import (
    EXIT_AS_EXPECTED, EXIT_NOT_AS_EXPECTED, RunFailure, UsageError, interrupted_exit, output_to, warn,
)


def add_parser(subparsers, name: str, help: str) -> None:
    parser = subparsers.add_parser(
        name, help=help,
        description="The files derived from protocol/configurations/: docs/refutations.md, each "
                    "refutation's golden trace protocol/configurations/<Name>.txt and the manifest's figures "
                    "README.md and docs/ quote, in the project's checkout "
                    "(the one this package runs from, or the working directory's).",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate them")
    mode.add_argument("--check", action="store_true", help="exit 1, showing a diff, if any is stale")
    parser.set_defaults(run=run)


def run(args) -> int:
    root = find_checkout()
    if root is None:
        raise UsageError("docs works on the project's checkout (pyproject.toml, docs/, protocol/configurations/), "
                         "and none was found here or above: run it from inside the checkout")
    try:
        files = derived_files(root)
        where = lambda path: shown_path(path, root)  # noqa: E731
        orphans = orphan_traces(root, files)
        return write_all(files, where, orphans) if args.write else compare(files, where, root, orphans)
    except DocsError as error:
        raise UsageError(str(error)) from None


def compare(files: dict, where, root, orphans: list) -> int:
    for path in files:  # nothing to diff against: one line, not the whole file as a diff
        if not stored(path):
            state = "empty" if path.exists() else "missing"
            raise UsageError(f"{where(path)} is {state}: regenerate it with `{REGENERATE}`, "
                             "or restore it (git checkout)")
    stale = [path for path, text in files.items() if stored(path) != text]
    with output_to(None) as sink:
        for path in stale:
            sink.writelines(difflib.unified_diff(
                stored(path).splitlines(True), files[path].splitlines(True),
                f"{where(path)} (committed)", f"{where(path)} (now)"))
        for path in orphans:
            warn(f"{where(path)} is no configuration's golden trace (renamed or removed?): "
                 f"`{REGENERATE}` removes it")
        if stale:
            checkout = "" if root == PACKAGE_ROOT else f" in {root}"
            warn(f"{len(stale)} derived file(s) stale{checkout}: if the change is intended, run "
                 f"`{REGENERATE}` and commit them")
        if stale or orphans:
            return EXIT_NOT_AS_EXPECTED
        print(f"{len(files)} derived files are current", file=sink)
    return EXIT_AS_EXPECTED


def write_all(files: dict, where, orphans: list) -> int:
    """Write each derived file that changed (each one whole, or not at all), saying which were
    written and how many were already current (an unwritable one is one line naming it),
    and remove the golden traces no configuration derives."""
    written = 0
    with output_to(None) as sink:
        try:
            for path, text in files.items():
                if stored(path) == text:
                    continue  # current: not rewritten, not said to be
                try:
                    with output_to(str(path)) as file:
                        file.write(text)
                except (UsageError, RunFailure) as error:
                    raise RunFailure(f"cannot write {where(path)}: {reason(error)}; "
                                     f"{written} of the changed files written, each whole") from None
                written += 1
                print(f"wrote {where(path)}", file=sink)
            for path in orphans:
                path.unlink()
                print(f"removed {where(path)}, no configuration's golden trace", file=sink)
            current = len(files) - written
            print(f"{written} derived file(s) written, {current} already current", file=sink)
        except KeyboardInterrupt:
            warn(f"interrupted ({how()}) after writing {written} of {len(files)} files, each whole: "
                 f"run `{REGENERATE}` again")
            return interrupted_exit(signal_received())
    return EXIT_AS_EXPECTED


def reason(error: Exception) -> str:
    """What output_to's line says went wrong, without its `--output PATH` (docs has no --output)."""
    text = str(error)
    return text.split(": ", 1)[1] if text.startswith(("cannot write --output", "--output")) and ": " in text else text
