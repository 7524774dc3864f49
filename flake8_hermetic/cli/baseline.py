"""``flake8-hermetic baseline``: regenerate, prune, check and stats."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from flake8_hermetic.baseline import ratchet
from flake8_hermetic.baseline.format import (
    NEW_FILE_HEADER, Baseline, load, parse, parse_all, read_text, write_target,
)
from flake8_hermetic.cli import common


def _read(shown: str) -> tuple[str | None, Baseline]:
    existing = read_text(shown)
    return existing, Baseline(shown) if existing is None else parse(existing, shown)


def command_regenerate(args: argparse.Namespace) -> int:
    result = common.prepare_scan(args)
    shown = common.shown(result.baseline_path)
    target = write_target(shown, result.settings.config_dir)  # before the scan: fail fast
    _read(shown)  # a malformed baseline is refused before the scan, too
    result.run()
    common.require_test_files(result)
    common.refuse_outside_root(result)
    common.warn_unlinted(result)
    current = common.judged(result, True)
    with common.baseline_lock(target):
        # read again under the lock: another run may have written it meanwhile
        existing, old = _read(shown)
        if args.no_grow:
            grown = [f for new, _ in ratchet.judge(old, current).values() for f in new]
            if grown:
                for found in sorted(grown, key=lambda f: (f.filename, f.line, f.col)):
                    print(f"{found.filename}:{found.line}:{found.col}: {found.text}")
                print(
                    f"flake8-hermetic: {len(grown)} violation(s) not in {shown}; nothing written (--no-grow)",
                    file=sys.stderr,
                )
                return 1
        entries = ratchet.regenerate(old, current, common.exists_under(result.root))
        header = old.header if existing is not None else list(NEW_FILE_HEADER)
        wrote = common.write_baseline(target, header, entries)
    common.print_changes(old.entries, entries)
    print(f"{shown}: {len(entries)} entries{'' if wrote else ' (unchanged)'}; {common.covered(result)}")
    return 0


def command_prune(args: argparse.Namespace) -> int:
    result = common.prepare_scan(args)
    shown = common.shown(result.baseline_path)
    target = write_target(shown, result.settings.config_dir) if not args.check else None
    load(shown)
    result.run()
    common.require_test_files(result)
    judged = common.judged(result, False)
    with common.baseline_lock(target) if target is not None else contextlib.nullcontext():
        old = load(shown)  # again, under the lock
        kept, removed = ratchet.prune(old, judged, common.exists_under(result.root))
        for entry, reason in removed:
            verb = "would remove" if args.check else "removed"
            print(f"{shown}:{entry.line}: {verb} {entry.render()!r}: {reason}")
        if args.check:
            return 1 if removed else 0
        if removed:
            common.write_baseline(target, old.header, kept)  # type: ignore[arg-type]
    common.print_changes(old.entries, kept)
    print(f"{shown}: {len(kept)} entries; {common.covered(result)}")
    return 0


def command_baseline_check(args: argparse.Namespace) -> int:
    result = common.prepare_scan(args)
    shown = common.shown(result.baseline_path)
    baseline, malformed = parse_all(read_text(shown) or "", shown)
    result.run()
    common.require_test_files(result)
    problems = [(error.line, str(error)) for error in malformed]
    exists = common.exists_under(result.root)
    current = common.judged(result, False)
    _, removed = ratchet.prune(baseline, current, exists)
    for entry, reason in removed:
        problems.append((entry.line, f"{shown}:{entry.line}: {reason}: {entry.render()!r}"))
    owned = common.owned_codes(result.settings)
    for entry in baseline.entries:
        if entry.code not in owned:  # never judged by anything: it would stay forever
            problems.append((entry.line, f"{shown}:{entry.line}: no rule owns {entry.code} (an unknown code, or a "
                                         f"pattern rule gone from the rules file): {entry.render()!r}"))
    unlinted = common.unlinted_entries(result, baseline.entries, exists)
    if unlinted:
        setting = common.test_file_setting(result)
        for entry in unlinted:
            problems.append((entry.line, f"{shown}:{entry.line}: {entry.path} was not linted, so this entry "
                                         f"was not judged (test files: {setting}): {entry.render()!r}"))
    for _, message in sorted(problems):
        print(message)
    if problems:
        return 1
    judged = sum(1 for entry in baseline.entries if ratchet.is_judged(entry, current))
    verdict = f"{judged} judged, all current" if judged or not baseline.entries else "none judged"
    print(f"{shown}: {len(baseline.entries)} entries, {verdict} ({common.covered(result)})")
    return 0


def command_stats(args: argparse.Namespace) -> int:
    shown = common.shown(common.prepare_scan(args).baseline_path)
    baseline = load(shown)
    by_code, by_directory = ratchet.stats(baseline.entries)
    print(f"{shown}: {len(baseline.entries)} entries")
    for title, rows in (("code", by_code), ("directory", by_directory)):
        if not rows:
            continue
        width = max(len(title), *(len(name) for name, _ in rows))
        print(f"\n{title:<{width}}  entries")
        for name, count in rows:
            print(f"{name:<{width}}  {count:>7}")
    return 0


def add_parser(commands: Any) -> None:
    baseline = commands.add_parser("baseline", help="maintain the baseline file")
    actions = baseline.add_subparsers(dest="action", metavar="ACTION", required=True)
    regenerate = actions.add_parser("regenerate", help="write every current violation into the baseline")
    common.lint_options(regenerate)
    regenerate.add_argument(
        "--no-grow", action="store_true",
        help="exit 1 and write nothing if a violation is not accepted by the baseline yet",
    )
    regenerate.set_defaults(handler=command_regenerate)
    prune = actions.add_parser("prune", help="drop stale entries and entries of deleted files; never add")
    common.lint_options(prune)
    prune.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file would change")
    prune.set_defaults(handler=command_prune)
    judge = actions.add_parser("check", help="report stale, missing-file and malformed entries")
    common.lint_options(judge)
    judge.set_defaults(handler=command_baseline_check)
    stats = actions.add_parser("stats", help="entries per code and per top-level directory")
    common.config_options(stats)
    stats.set_defaults(handler=command_stats)
