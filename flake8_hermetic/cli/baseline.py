"""``flake8-hermetic baseline``: regenerate, prune, check and stats."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from flake8_hermetic.baseline import charts, history, ratchet
from flake8_hermetic.baseline.format import (
    NEW_FILE_HEADER, Baseline, load, parse, parse_all, read_text, write_atomic, write_target,
)
from flake8_hermetic.cli import common

DEFAULT_TOP = 10  # files in the default view of stats
HISTORY_LIMIT = 50


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
        # Growth is the explicit act: an existing baseline only shrinks unless told.
        # Creating the file is the adoption itself, so it needs no flag.
        adopting = existing is None
        if not adopting and not args.allow_growth:
            grown = [f for new, _ in ratchet.judge(old, current).values() for f in new]
            if grown:
                for found in sorted(grown, key=lambda f: (f.filename, f.line, f.col)):
                    print(f"{found.filename}:{found.line}:{found.col}: {found.text}")
                count = f"{len(grown)} new violation{'s' if len(grown) != 1 else ''}"
                print(
                    f"flake8-hermetic: {count} would be added to {shown}; nothing written (--allow-growth adds them)",
                    file=sys.stderr,
                )
                return 1
        entries = ratchet.regenerate(old, current, common.exists_under(result.root))
        entries, lost = ratchet.carry_comments(old.entries, entries)
        header = old.header if existing is not None else list(NEW_FILE_HEADER)
        wrote = common.write_baseline(target, header, entries, old.footer)
    common.print_lost_comments(shown, lost)
    common.print_changes(old.entries, entries)
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
    common.narrow_to_baseline(result, load(shown).entries, args)
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
            common.write_baseline(target, old.header, kept, old.footer)  # type: ignore[arg-type]
    common.print_lost_comments(shown, [entry for entry, _ in removed])
    common.print_changes(old.entries, kept)
    print(f"{shown}: {len(kept)} entries; {common.covered(result)}")
    # as a fixing hook: the file changed, so the commit must be retried with it staged
    return 1 if removed and args.exit_nonzero_on_fix else 0


def command_baseline_check(args: argparse.Namespace) -> int:
    result = common.prepare_scan(args)
    shown = common.shown(result.baseline_path)
    baseline, malformed = parse_all(read_text(shown) or "", shown)
    common.narrow_to_baseline(result, baseline.entries, args)
    result.run()
    if not result.narrowed:  # narrowed to the baseline's files, each one not linted is reported below
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
