"""The ``flake8-hermetic`` command line.

    flake8-hermetic check [PATH ...] [--format default|github|sarif]
    flake8-hermetic baseline regenerate [PATH ...] [--no-grow]
    flake8-hermetic baseline prune [PATH ...] [--check]
    flake8-hermetic baseline check [PATH ...]
    flake8-hermetic baseline stats
    flake8-hermetic rules
    flake8-hermetic explain HRMnnn

Every command that lints runs flake8's own engine in-process (see
:mod:`flake8_hermetic.collect`), so it sees the files, config,
``per-file-ignores`` and ``# noqa`` comments ``flake8`` sees. Exit status:
0 clean, 1 findings (or a refused ``--no-grow``/``--check``), 2 a usage,
config or baseline error (one line, never a traceback), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from flake8_hermetic import __version__, reporting, ruledocs
from flake8_hermetic.baseline import ratchet
from flake8_hermetic.baseline.format import (
    NEW_FILE_HEADER,
    Baseline,
    BaselineError,
    Entry,
    load,
    parse,
    parse_all,
    read_text,
    render,
    write_atomic,
)
from flake8_hermetic.checker import STALE_CODE, stale_message
from flake8_hermetic.collect import Found, Interrupted, Scan, ScanError, prepare
from flake8_hermetic.settings import ConfigError, Settings

CODE_ARGUMENT = re.compile(r"^HRM\d{3}$", re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    """Usage errors are one line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _shown(path: str) -> str:
    """A path as the user would type it: relative when under the CWD."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative


# -- the project's own rules ----------------------------------------------------

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
        source = f"{_shown(settings.rules_path)}:{rule.line}" if rule.line else _shown(settings.rules_path)
        page = f"# {rule.code}: {rule.summary()}\n\n## What it does\nA project pattern rule declared in `{source}`"
        page += f", checked in {files}.\n"
        if rule.note:
            page += f"\n{rule.note}\n"
        page += f"\n## Message\n`{rule.code} {rule.message}`\n"
        pages[rule.code] = (rule.summary(), page)
    return pages


# -- check ----------------------------------------------------------------------------

def _baseline_for_check(result: Scan, explicit: str | None) -> Baseline:
    if not explicit and result.settings.baseline_path is None:
        return Baseline(result.baseline_path)  # --hermetic-no-baseline in the config
    return load(_shown(result.baseline_path))


def _judged(result: Scan, visible_only: bool) -> dict[str, ratchet.Judged[Found]]:
    """The linted files, with every violation the plugin found (as it
    matches them) or only those flake8 would show (what regenerate writes)."""
    return {
        path: ratchet.Judged(
            [f for f in linted.violations if result.visible(f)] if visible_only else linted.violations,
            linted.codes,
        )
        for path, linted in result.files.items()
    }


def check_report(result: Scan, baseline: Baseline) -> reporting.Report:
    """What flake8 with the plugin would report, matched exactly as the plugin does."""
    new: list[Found] = []
    stale: list[Found] = []
    baselined = 0
    for path, (unaccepted, stale_entries) in ratchet.judge(baseline, _judged(result, False)).items():
        linted = result.files[path]
        baselined += len(linted.violations) - len(unaccepted)
        new.extend(f for f in unaccepted if result.visible(f))
        if STALE_CODE in result.enabled:
            for entry in sorted(stale_entries):
                report = result.stale_report(linted, stale_message(entry))
                if result.visible(report):
                    stale.append(report)
    return reporting.Report(new + result.problems, stale, baselined)


def command_check(args: argparse.Namespace) -> int:
    result = _prepare(args)
    baseline = _baseline_for_check(result, args.baseline)
    result.run()
    report = check_report(result, baseline)
    if args.format == "github":
        sys.stdout.write(reporting.github(report))
    elif args.format == "sarif":
        codes = {*result.enabled, *(f.code for f in report.findings())}
        rules = reporting.rule_help(codes, ruledocs.pages(), project_rules(result.settings))
        sys.stdout.write(reporting.sarif(report, rules, result.baseline_dir))
        print(report.summary(), file=sys.stderr)  # stdout stays one JSON document
    else:
        sys.stdout.write(reporting.default(report))
    if args.exit_zero:
        return 0
    return 1 if report.new or report.stale else 0


# -- baseline --------------------------------------------------------------------------

def _prepare(args: argparse.Namespace) -> Scan:
    return prepare(getattr(args, "paths", []), config=args.config, jobs=getattr(args, "jobs", None),
                   baseline=args.baseline)


def _exists_under(directory: str) -> Callable[[str], bool]:
    return lambda path: os.path.exists(os.path.join(directory, path))


def _warn_unlinted(result: Scan) -> None:
    for problem in result.problems:
        print(
            f"{problem.filename}:{problem.line}:{problem.col}: {problem.text} "
            "(not linted: its baseline entries are kept)",
            file=sys.stderr,
        )


def _print_changes(old: Sequence[Entry], new: Sequence[Entry]) -> None:
    changed = ratchet.changes(old, new)
    if not changed:
        print("no changes")
    for code, (added, removed) in changed.items():
        print(f"{code} +{added} -{removed}")


class CommandError(Exception):
    """A command cannot do its job; ``str()`` is the one line to show."""


def _write(path: str, header: Sequence[str], entries: Sequence[Entry]) -> bool:
    """Write the baseline if its text changes; True if it did."""
    text = render(header, entries)
    if read_text(path) == text:
        return False
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise CommandError(f"flake8-hermetic: cannot write {_shown(path)}: {exc.strerror}") from None
    return True


def command_regenerate(args: argparse.Namespace) -> int:
    result = _prepare(args)
    shown = _shown(result.baseline_path)
    existing = read_text(shown)
    old = Baseline(shown) if existing is None else parse(existing, shown)
    result.run()
    _warn_unlinted(result)
    current = _judged(result, True)
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
    entries = ratchet.regenerate(old, current, _exists_under(result.baseline_dir))
    header = old.header if existing is not None else list(NEW_FILE_HEADER)
    wrote = _write(result.baseline_path, header, entries)
    _print_changes(old.entries, entries)
    print(f"{shown}: {len(entries)} entries{'' if wrote else ' (unchanged)'}")
    return 0


def command_prune(args: argparse.Namespace) -> int:
    result = _prepare(args)
    shown = _shown(result.baseline_path)
    old = load(shown)
    result.run()
    kept, removed = ratchet.prune(old, _judged(result, False), _exists_under(result.baseline_dir))
    for entry, reason in removed:
        verb = "would remove" if args.check else "removed"
        print(f"{shown}:{entry.line}: {verb} {entry.render()!r}: {reason}")
    if args.check:
        return 1 if removed else 0
    if removed:
        _write(result.baseline_path, old.header, kept)
    _print_changes(old.entries, kept)
    print(f"{shown}: {len(kept)} entries")
    return 0


def command_baseline_check(args: argparse.Namespace) -> int:
    result = _prepare(args)
    shown = _shown(result.baseline_path)
    baseline, malformed = parse_all(read_text(shown) or "", shown)
    result.run()
    problems = [(error.line, str(error)) for error in malformed]
    _, removed = ratchet.prune(baseline, _judged(result, False), _exists_under(result.baseline_dir))
    for entry, reason in removed:
        problems.append((entry.line, f"{shown}:{entry.line}: {reason}: {entry.render()!r}"))
    for _, message in sorted(problems):
        print(message)
    if problems:
        return 1
    print(f"{shown}: {len(baseline.entries)} entries, all current")
    return 0


def command_stats(args: argparse.Namespace) -> int:
    shown = _shown(_prepare(args).baseline_path)
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


# -- rules -----------------------------------------------------------------------------

def _plain(markdown: str) -> str:
    return re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown)


def command_rules(args: argparse.Namespace) -> int:
    rows = _plain(ruledocs.table()).splitlines()
    settings = _prepare(args).settings
    extra = [f"| {code} | {summary} | on |" for code, (summary, _) in sorted(project_rules(settings).items())]
    stale_row = next((i for i, row in enumerate(rows) if row.startswith(f"| {STALE_CODE} ")), len(rows))
    rows[stale_row:stale_row] = extra
    print("\n".join(rows))
    return 0


def command_explain(args: argparse.Namespace) -> int:
    code = args.code.upper()
    page = ruledocs.pages().get(code) if CODE_ARGUMENT.match(code) else None
    if page is None and CODE_ARGUMENT.match(code):
        page = project_rules(_prepare(args).settings).get(code, (None, None))[1]
    if page is None:
        print(f"flake8-hermetic: unknown rule code {args.code!r} (flake8-hermetic rules lists them)", file=sys.stderr)
        return 2
    sys.stdout.write(page if page.endswith("\n") else page + "\n")
    return 0


# -- the parser ------------------------------------------------------------------------

def _config_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="flake8 config file (default: the one flake8 finds)")
    parser.add_argument(
        "--baseline", metavar="FILE",
        help="baseline file (default: --hermetic-baseline, else hermetic-baseline.txt next to the flake8 config)",
    )


def _lint_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: flake8's)")
    parser.add_argument("-j", "--jobs", metavar="N", help="processes for flake8's checks (flake8's --jobs)")
    _config_options(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="flake8-hermetic",
        description="Test-suite hazards through flake8, and the ratchet baseline that lets a legacy suite adopt them.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command_name", metavar="COMMAND", required=True)

    check = commands.add_parser("check", help="lint with the pack's rules and the baseline; print what is new")
    _lint_options(check)
    check.add_argument("--format", choices=reporting.FORMATS, default="default", help="output format")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when violations are found (as flake8's)")
    check.set_defaults(handler=command_check)

    baseline = commands.add_parser("baseline", help="maintain the baseline file")
    actions = baseline.add_subparsers(dest="action", metavar="ACTION", required=True)
    regenerate = actions.add_parser("regenerate", help="write every current violation into the baseline")
    _lint_options(regenerate)
    regenerate.add_argument(
        "--no-grow", action="store_true",
        help="exit 1 and write nothing if a violation is not accepted by the baseline yet",
    )
    regenerate.set_defaults(handler=command_regenerate)
    prune = actions.add_parser("prune", help="drop stale entries and entries of deleted files; never add")
    _lint_options(prune)
    prune.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file would change")
    prune.set_defaults(handler=command_prune)
    judge = actions.add_parser("check", help="report stale, missing-file and malformed entries")
    _lint_options(judge)
    judge.set_defaults(handler=command_baseline_check)
    stats = actions.add_parser("stats", help="entries per code and per top-level directory")
    _config_options(stats)
    stats.set_defaults(handler=command_stats)

    rules = commands.add_parser("rules", help="the rule table")
    _config_options(rules)
    rules.set_defaults(handler=command_rules)
    explain = commands.add_parser("explain", help="one rule's documentation")
    explain.add_argument("code", metavar="HRMnnn")
    _config_options(explain)
    explain.set_defaults(handler=command_explain)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except (BaselineError, ScanError, CommandError) as exc:
        print(exc, file=sys.stderr)
    except ConfigError as exc:
        print(f"flake8-hermetic: {exc}", file=sys.stderr)
    except (KeyboardInterrupt, Interrupted):
        print("flake8-hermetic: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (| head) went away. Point stdout at nothing so the
        # interpreter's final flush does not complain about it too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
