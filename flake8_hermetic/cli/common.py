"""What every command shares: the one-line errors, the scan, paths as shown."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import NoReturn

from flake8_hermetic.baseline import ratchet
from flake8_hermetic.baseline.format import Entry, locked, read_text, render, write_atomic
from flake8_hermetic import selection
from flake8_hermetic.checker import STALE_CODE
from flake8_hermetic.collect import Found, Scan, prepare
from flake8_hermetic.settings import Settings


class Parser(argparse.ArgumentParser):
    """Usage errors are one line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


class CommandError(Exception):
    """A command cannot do its job; ``str()`` is the one line to show."""


def shown(path: str) -> str:
    """A path as the user would type it: relative when under the CWD."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative


def project_rules(settings: Settings) -> dict[str, tuple[str, str]]:
    """The project's pattern rules (HRM8xx) as ``code -> (summary, page)``.

    The one place ``rules``, ``explain`` and SARIF's rule help learn about
    the rules a project declares in its ``--hermetic-rules`` file
    (:mod:`flake8_hermetic.patterns`).
    """
    if not settings.rules_path:
        return {}
    from flake8_hermetic.patterns import load_pattern_rules

    pages = {}
    for rule in load_pattern_rules(settings.rules_path).rules:
        files = ", ".join(f"`{glob}`" for glob in rule.files) if rule.files else "the test files"
        source = f"{shown(settings.rules_path)}:{rule.line}" if rule.line else shown(settings.rules_path)
        page = f"# {rule.code}: {rule.summary()}\n\n## What it does\nA project pattern rule declared in `{source}`"
        page += f", checked in {files}.\n"
        if rule.note:
            page += f"\n{rule.note}\n"
        page += f"\n## Message\n`{rule.code} {rule.message}`\n"
        pages[rule.code] = (rule.summary(), page)
    return pages


def owned_codes(settings: Settings) -> frozenset[str]:
    """Every code an entry may carry: the built-in rules', the runtime
    guard's and the project's pattern rules'."""
    from flake8_hermetic.catalog import all_rules, runtime_codes

    return frozenset({*all_rules(), *runtime_codes(), *project_rules(settings)}) - {STALE_CODE}


def prepare_scan(args: argparse.Namespace, extra: Sequence[str] = ()) -> Scan:
    """flake8's options for the command's paths, its selection flags (if it
    takes them) and ``extra`` flake8 arguments."""
    paths = getattr(args, "paths", [])
    for path in paths:
        # flake8 reports E902 for it and goes on: a typo would check nothing and pass
        if path != "-" and not os.path.lexists(path):
            raise CommandError(f"flake8-hermetic: {path}: no such file or directory")
    flags = selection.command_line_arguments(args) if hasattr(args, "select") else []
    scan = prepare(paths, config=args.config, jobs=getattr(args, "jobs", None),
                   baseline=args.baseline, extra=[*flags, *extra])
    scan.direct = getattr(args, "engine", "direct") == "direct"
    return scan


def test_file_setting(result: Scan) -> str:
    """The setting that decides which files are test files, for a message."""
    settings = result.settings
    if settings.test_files_given:
        return f"test-files in {shown_location(settings.test_files_source)}"
    from flake8_hermetic.checker import HermeticChecker

    runtime = HermeticChecker.runtime
    first = (result.paths or ["."])[0]
    start = first if os.path.isdir(first) else os.path.dirname(os.path.abspath(first))
    config = runtime.project.configs.for_directory(start).path if runtime is not None else None
    if config:
        return f"pytest's configuration in {shown(config)} (python_files, testpaths) unless test-files is set"
    from flake8_hermetic.project.config import DEFAULT_PYTHON_FILES

    return (f"pytest's defaults (python_files = {' '.join(DEFAULT_PYTHON_FILES)}; no pytest configuration found) "
            "unless test-files is set")


def shown_location(location: str) -> str:
    """``FILE:LINE`` with the file as :func:`shown` writes it."""
    file, separator, line = location.rpartition(":")
    return f"{shown(file)}:{line}" if separator and line.isdigit() else location


def require_test_files(result: Scan) -> None:
    """A run that linted no test file checked nothing: a failure (exit 2), not
    a pass, unless the user named only files (pre-commit passes the staged
    files, which may all be library code). Narrowed to the files a baseline
    names, the same holds of them; a baseline that names no existing file
    leaves nothing to lint."""
    if result.test_files or result.problems:
        return
    if result.narrowed and not result.options.filenames:
        return
    paths = result.paths
    if paths and all(os.path.isfile(path) or path == "-" for path in paths):
        return
    where = "the files the baseline names" if result.narrowed else " ".join(paths) or "."
    raise CommandError(
        f"flake8-hermetic: no test file found in {where}, so nothing was checked; "
        f"which files are test files is decided by {test_file_setting(result)}"
    )


def judged(result: Scan, visible_only: bool) -> dict[str, ratchet.Judged[Found]]:
    """The linted files, with every violation the plugin found (as it
    matches them) or only those flake8 would show (what regenerate writes)."""
    return {
        path: ratchet.Judged(
            [f for f in linted.violations if result.visible(f)] if visible_only else linted.violations,
            linted.codes,
        )
        for path, linted in result.files.items()
    }


def covered(result: Scan) -> str:
    """What a run linted, for the commands' last line."""
    from flake8_hermetic.reporting import test_files

    return f"{test_files(result.test_files)} linted"


def refuse_outside_root(result: Scan) -> None:
    """A file outside the project root has no baseline name: writing one
    (``../x``) would make every reader refuse the file."""
    for path, linted in sorted(result.files.items()):
        if path.startswith("../") or os.path.isabs(path):
            raise CommandError(
                f"flake8-hermetic: {linted.filename}: outside the project root {result.root}; "
                "its entries cannot be written (lint only paths inside the project)"
            )


def unlinted_entries(result: Scan, entries: Sequence[Entry], exists: Callable[[str], bool]) -> list[Entry]:
    """Static entries of existing files that no linted path reached (a
    whole-project run: no path was typed): nothing judged them."""
    if result.paths_given:
        return []
    unreadable = {problem.path for problem in result.problems}
    return [
        entry for entry in entries
        if not ratchet.is_runtime(entry.code) and entry.path not in result.files
        and entry.path not in unreadable and exists(entry.path)
    ]


def narrow_to_baseline(result: Scan, entries: Sequence[Entry], args: argparse.Namespace) -> None:
    """With no PATH typed, lint only the existing files the baseline's static
    entries name: nothing else can make an entry stale."""
    if getattr(args, "paths", None):
        return
    exists = exists_under(result.root)
    files = sorted({entry.path for entry in entries if not ratchet.is_runtime(entry.code) and exists(entry.path)})
    result.narrow_to([shown(os.path.join(result.root, path)) for path in files])


def exists_under(directory: str) -> Callable[[str], bool]:
    return lambda path: os.path.exists(os.path.join(directory, path))


def warn_unlinted(result: Scan) -> None:
    for problem in result.problems:
        print(
            f"{problem.filename}:{problem.line}:{problem.col}: {problem.text} "
            "(not linted: its baseline entries are kept)",
            file=sys.stderr,
        )


def print_changes(old: Sequence[Entry], new: Sequence[Entry]) -> None:
    changed = ratchet.changes(old, new)
    if not changed:
        print("no changes")
    for code, (added, removed) in changed.items():
        print(f"{code} +{added} -{removed}")


@contextlib.contextmanager
def baseline_lock(path: str) -> Iterator[None]:
    """:func:`~flake8_hermetic.baseline.format.locked`, with a lock file that
    cannot be made reported as the baseline that cannot be written."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(locked(path))
        except OSError as exc:
            raise CommandError(f"flake8-hermetic: cannot write {shown(path)}: {exc.strerror}") from None
        yield


def print_lost_comments(shown_path: str, entries: Sequence[Entry]) -> None:
    """Say which comments left the file with their entries (nothing else removes one)."""
    for entry in entries:
        if entry.comments:
            more = f" (and {len(entry.comments) - 1} more lines)" if len(entry.comments) > 1 else ""
            print(f"{shown_path}:{entry.line - len(entry.comments)}: the comment above the entry went with it: "
                  f"{entry.comments[0].strip()!r}{more}")


def write_baseline(path: str, header: Sequence[str], entries: Sequence[Entry], footer: Sequence[str] = ()) -> bool:
    """Write the baseline if its text changes; True if it did."""
    text = render(header, entries, footer)
    if read_text(path) == text:
        return False
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise CommandError(f"flake8-hermetic: cannot write {shown(path)}: {exc.strerror}") from None
    return True


# -- the options several commands take ------------------------------------------------

def config_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="flake8 config file (default: the one flake8 finds)")
    parser.add_argument(
        "--baseline", metavar="FILE",
        help="baseline file, anywhere (default: --hermetic-baseline, else hermetic-baseline.txt in the project root)",
    )


def lint_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: flake8's)")
    parser.add_argument("-j", "--jobs", metavar="N", help="processes for flake8's checks (flake8's --jobs)")
    # flake8's own file checker instead of the direct path: for the equivalence test and bug reports
    parser.add_argument("--engine", choices=("direct", "flake8"), default="direct", help=argparse.SUPPRESS)
    config_options(parser)
    selection.add_options(parser)
