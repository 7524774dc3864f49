"""``flake8-hermetic baseline``: regenerate, prune, check and stats."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flake8.utils import fnmatch

from flake8_hermetic.baseline import charts, history, ratchet
from flake8_hermetic.baseline.format import (
    NEW_FILE_HEADER, Baseline, Entry, is_runtime, load, parse, parse_all, read_text, write_atomic, write_target,
)
from flake8_hermetic.cli import common
from flake8_hermetic.collect import Found, Scan
from flake8_hermetic.reporting import test_files

DEFAULT_TOP = 10  # files in the default view of stats
HISTORY_LIMIT = 50


def _read(shown: str) -> tuple[str | None, Baseline]:
    existing = read_text(shown)
    return existing, Baseline(shown) if existing is None else parse(existing, shown)


# -- a renamed test file carries its entries ----------------------------------------

@dataclass(frozen=True)
class Renames:
    """Where the files a baseline names but the disk no longer has went:
    what git knows (None: no repository, or no git), read once per command."""

    gone: Sequence[str]
    changes: history.Changes | None

    def git_moves(self, exists: Callable[[str], bool]) -> list[ratchet.Move]:
        renames = self.changes.renames if self.changes is not None else {}
        return [ratchet.Move(old, renames[old], "git") for old in self.gone if old in renames
                and exists(renames[old])]

    def candidates(self, current: Mapping[str, Any]) -> list[str]:
        """The linted files a gone one may have become: those git calls new,
        or without git every linted file."""
        added = self.changes.added if self.changes is not None else None
        return sorted(current if added is None else added.intersection(current))


def find_renames(result: Scan, baseline: Baseline) -> Renames:
    """The baseline's gone files and, if there are any, what git says of them."""
    gone = ratchet.gone_files(baseline, common.exists_under(result.root))
    if not gone:
        return Renames((), None)
    return Renames(gone, history.working_changes(result.root, result.baseline_path))


def follow_renames(
    result: Scan, baseline: Baseline, current: Mapping[str, ratchet.Judged[Found]], renames: Renames | None = None,
) -> tuple[Baseline, list[ratchet.Move]]:
    """``baseline`` with the entries of each renamed test file under its new
    path, and the moves: git's renames first, then, for a gone file git
    does not account for, a new linted file with exactly its findings."""
    if renames is None:
        renames = find_renames(result, baseline)
    if not renames.gone:
        return baseline, []
    moves = renames.git_moves(common.exists_under(result.root))
    moved = ratchet.move(baseline, moves)
    left = [path for path in renames.gone if path not in {step.old for step in moves}]
    if left:
        paired = ratchet.pair_by_findings(moved, current, left, renames.candidates(current))
        moves += paired
        moved = ratchet.move(moved, paired)
    return moved, sorted(moves, key=lambda step: step.old)


def _narrow(result: Scan, baseline: Baseline, renames: Renames, args: argparse.Namespace) -> bool:
    """With no PATH typed, lint only the existing files the baseline's static
    entries name (nothing else can make an entry stale), and the files a
    gone one may have become: git's renames and new files, or, without git,
    the whole project (then True: that run may find no test file at all)."""
    if getattr(args, "paths", None):
        return False
    exists = common.exists_under(result.root)
    files = {entry.path for entry in baseline.entries if not is_runtime(entry.code) and exists(entry.path)}
    files.update(step.new for step in renames.git_moves(exists))
    explained = {step.old for step in renames.git_moves(exists)}
    unexplained = [
        path for path in renames.gone if path not in explained
        and any(entry.path == path and not is_runtime(entry.code) for entry in baseline.entries)
    ]
    if unexplained:
        added = renames.changes.added if renames.changes is not None else None
        if added is None:
            return True  # where did it go? only a look at every test file can tell
        patterns = result.options.filename
        files.update(path for path in added if exists(path) and fnmatch(path, patterns))
    result.narrow_to([common.shown(os.path.join(result.root, path)) for path in sorted(files)])
    return False


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


def _how(step: ratchet.Move) -> str:
    return "a git rename" if step.by == "git" else "the same findings under a new path"


def _print_moves(shown: str, moves: Sequence[ratchet.Move], baseline: Baseline, verb: str) -> None:
    for step in moves:
        entries = [entry for entry in baseline.entries if entry.path == step.old]
        print(f"{shown}:{entries[0].line}: {verb} {_entries(len(entries))} of {step.old} to {step.new} "
              f"({_how(step)})")


def _print_changes(old: Sequence[Entry], new: Sequence[Entry], moved: bool) -> None:
    """Per code, what changed besides the moves (nothing else: no line, after a move)."""
    if moved and not ratchet.changes(old, new):
        return
    common.print_changes(old, new)


def _covered(result: Scan) -> str:
    """What the run linted, counted as ``check`` counts the test files."""
    total = result.test_files_in_paths() if result.narrowed else result.test_files
    if total == result.test_files:
        return common.covered(result)
    return f"{test_files(total)}, {result.test_files} linted: those the baseline names"


def _field_view(entry: Entry) -> str:
    """An entry as its line in the file: the fields TAB-separated."""
    return entry.render()


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
        # a renamed test file's entries are its debt, under its new name: no growth
        moved, moves = follow_renames(result, old, current)
        # Growth is the explicit act: an existing baseline only shrinks unless told.
        # Creating the file is the adoption itself, so it needs no flag.
        adopting = existing is None
        if not adopting and not args.allow_growth:
            grown = [f for new, _ in ratchet.judge(moved, current).values() for f in new]
            if grown:
                for found in sorted(grown, key=lambda f: (f.filename, f.line, f.col)):
                    print(f"{found.filename}:{found.line}:{found.col}: {found.text}")
                count = f"{len(grown)} new violation{'s' if len(grown) != 1 else ''}"
                print(
                    f"flake8-hermetic: {count} would be added to {shown}; nothing written (--allow-growth adds them)",
                    file=sys.stderr,
                )
                return 1
        entries = ratchet.regenerate(moved, current, common.exists_under(result.root))
        entries, lost = ratchet.carry_comments(moved.entries, entries)
        header = old.header if existing is not None else list(NEW_FILE_HEADER)
        wrote = common.write_baseline(target, header, entries, old.footer)
    _print_moves(shown, moves, old, "moved")
    common.print_lost_comments(shown, lost)
    _print_changes(moved.entries, entries, bool(moves))
    if adopting:
        print(f"{shown}: {len(entries)} entries (new file: commit it; from now on it only shrinks"
              f" unless regenerate is given --allow-growth); {common.covered(result)}")
    else:
        print(f"{shown}: {len(entries)} entries{'' if wrote else ' (unchanged)'}; {common.covered(result)}")
    return 0


def command_prune(args: argparse.Namespace) -> int:
    result = common.prepare_scan(args)
    shown = common.shown(result.baseline_path)
    target = write_target(shown, result.settings.config_dir) if not args.check else None
    first = load(shown)
    renames = find_renames(result, first)
    whole = _narrow(result, first, renames, args)
    result.run()
    if not whole:  # else the project was read to find where a gone file went: judged as it is
        common.require_test_files(result)
    judged = common.judged(result, False)
    with common.baseline_lock(target) if target is not None else contextlib.nullcontext():
        old = load(shown)  # again, under the lock
        moved, moves = follow_renames(result, old, judged, renames if old.entries == first.entries else None)
        kept, removed = ratchet.prune(moved, judged, common.exists_under(result.root))
        _print_moves(shown, moves, old, "would move" if args.check else "moved")
        for entry, reason in removed:
            verb = "would remove" if args.check else "removed"
            print(f"{shown}:{entry.line}: {reason}; {verb}: {_field_view(entry)}")
        if args.check:
            return 1 if removed or moves else 0
        assert target is not None
        wrote = bool(removed or moves) and common.write_baseline(target, old.header, kept, old.footer)
    common.print_lost_comments(shown, [entry for entry, _ in removed])
    _print_changes(moved.entries, kept, bool(moves))
    print(f"{shown}: {len(kept)} entries; {_covered(result)}")
    # as a fixing hook: the file changed, so the commit must be retried with it staged
    return 1 if wrote and args.exit_nonzero_on_fix else 0


def command_baseline_check(args: argparse.Namespace) -> int:
    result = common.prepare_scan(args)
    shown = common.shown(result.baseline_path)
    baseline, malformed = parse_all(read_text(shown) or "", shown)
    renames = find_renames(result, baseline)
    whole = _narrow(result, baseline, renames, args)
    result.run()
    if not result.narrowed and not whole:  # narrowed: each file not linted is reported below
        common.require_test_files(result)
    problems = [(error.line, str(error)) for error in malformed]
    exists = common.exists_under(result.root)
    current = common.judged(result, False)
    moved, moves = follow_renames(result, baseline, current, renames)
    for step in moves:
        entries = [entry for entry in baseline.entries if entry.path == step.old]
        problems.append((entries[0].line, f"{shown}:{entries[0].line}: {step.old} is now {step.new} "
                                          f"({_how(step)}): {_entries(len(entries))} to move "
                                          "(flake8-hermetic baseline prune)"))
    _, removed = ratchet.prune(moved, current, exists)
    for entry, reason in removed:
        problems.append((entry.line, f"{shown}:{entry.line}: {reason}: {entry.render()!r}"))
    owned = common.owned_codes(result.settings)
    for entry in moved.entries:
        if entry.code not in owned:  # never judged by anything: it would stay forever
            problems.append((entry.line, f"{shown}:{entry.line}: no rule owns {entry.code} (an unknown code, or a "
                                         f"pattern rule gone from the rules file): {entry.render()!r}"))
    unlinted = common.unlinted_entries(result, moved.entries, exists)
    if unlinted:
        setting = common.test_file_setting(result)
        for entry in unlinted:
            problems.append((entry.line, f"{shown}:{entry.line}: {entry.path} was not linted, so this entry "
                                         f"was not judged (test files: {setting}): {entry.render()!r}"))
    for _, message in sorted(problems):
        print(message)
    if problems:
        return 1
    judged = sum(1 for entry in moved.entries if ratchet.is_judged(entry, current))
    verdict = f"{judged} judged, all current" if judged or not baseline.entries else "none judged"
    print(f"{shown}: {len(baseline.entries)} entries, {verdict} ({_covered(result)})")
    return 0


def _print_table(title: str, rows: list[tuple[str, int]], top: int | None) -> None:
    shown_rows = rows[:top] if top else rows
    width = max(len(title), *(len(name) for name, _ in shown_rows))
    print(f"\n{title:<{width}}  entries")
    for name, count in shown_rows:
        print(f"{name:<{width}}  {count:>7}")
    if len(rows) > len(shown_rows):
        print(f"... and {len(rows) - len(shown_rows)} more (--by {title} --top 0 lists them all)")


def command_stats(args: argparse.Namespace) -> int:
    history_only = [flag for flag, given in (("--svg", args.svg), ("--limit", args.limit is not None),
                                             ("--chart", args.chart is not None)) if given]
    if args.history and (args.by or args.top is not None):
        raise common.CommandError("flake8-hermetic: --by and --top are for the current file, not --history")
    if history_only and not args.history:
        raise common.CommandError(f"flake8-hermetic: {history_only[0]} needs --history")
    shown = common.shown(common.prepare_scan(args).baseline_path)
    if args.history:
        return _history(args, shown)
    baseline = load(shown)
    print(f"{shown}: {len(baseline.entries)} entries")
    # default: every code, then the ten most indebted files
    views = [(args.by, args.top)] if args.by else [("code", args.top), ("file", args.top or DEFAULT_TOP)]
    for by, top in views:
        rows = ratchet.tally(baseline.entries, by)
        if rows:
            _print_table(by, rows, top)
    return 0


def _history(args: argparse.Namespace, shown: str) -> int:
    try:
        points = history.read_history(shown, HISTORY_LIMIT if args.limit is None else args.limit)
    except history.HistoryError as exc:
        raise common.CommandError(f"flake8-hermetic: cannot read the history of {shown}: {exc}") from None
    print("\n".join(charts.table(points)))
    if args.chart == "always" or (args.chart in (None, "auto") and sys.stdout.isatty()):
        print()
        print("\n".join(charts.terminal(points)))
    if args.svg:
        try:
            write_atomic(args.svg, charts.svg(points, f"{shown}: entries per code"))
        except OSError as exc:
            raise common.CommandError(f"flake8-hermetic: cannot write {args.svg}: {exc.strerror}") from None
        print(f"wrote {args.svg}")
    return 0


def _count(text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def add_parser(commands: Any) -> None:
    baseline = commands.add_parser("baseline", help="maintain the baseline file")
    actions = baseline.add_subparsers(dest="action", metavar="ACTION", required=True)
    regenerate = actions.add_parser(
        "regenerate", help="rewrite the baseline from the current violations; adds entries only with --allow-growth",
    )
    common.lint_options(regenerate)
    growth = regenerate.add_mutually_exclusive_group()
    growth.add_argument(
        "--allow-growth", action="store_true",
        help="also add the violations the baseline does not accept yet (without it: exit 1, nothing written)",
    )
    growth.add_argument(
        "--no-grow", action="store_true",
        help="refuse to add entries: the default now, kept so that old scripts work",
    )
    regenerate.set_defaults(handler=command_regenerate)
    prune = actions.add_parser("prune", help="drop stale entries and entries of deleted files; never add")
    common.lint_options(prune)
    fixing = prune.add_mutually_exclusive_group()
    fixing.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file would change")
    fixing.add_argument(
        "--exit-nonzero-on-fix", action="store_true",
        help="exit 1 when entries were removed (a fixing hook: stage the baseline and commit again)",
    )
    prune.set_defaults(handler=command_prune)
    judge = actions.add_parser("check", help="report stale, missing-file and malformed entries")
    common.lint_options(judge)
    judge.set_defaults(handler=command_baseline_check)
    stats = actions.add_parser(
        "stats", help="where the debt is (per code, file or test, most first), or how it burnt down (--history)",
    )
    common.config_options(stats)
    stats.add_argument("--by", choices=ratchet.STATS_KEYS, help="one table (default: every code, then the top files)")
    stats.add_argument("--top", type=_count, metavar="N", help="list only the N most indebted (0: all)")
    stats.add_argument("--history", action="store_true",
                       help="entries per commit and code over the baseline's git history, oldest first")
    stats.add_argument("--limit", type=_count, metavar="N",
                       help=f"--history: the last N commits that changed the file (default {HISTORY_LIMIT})")
    stats.add_argument("--svg", metavar="FILE", help="--history: also write the burn-down as an SVG chart")
    stats.add_argument("--chart", choices=("auto", "always", "never"),
                       help="--history: unicode bars after the table (auto: on a terminal)")
    stats.set_defaults(handler=command_stats)
