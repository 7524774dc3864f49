"""``flake8-hermetic check``: the pack's findings, matched against the baseline."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from flake8_hermetic import reporting, ruledocs, terminal
from flake8_hermetic.baseline import ratchet
from flake8_hermetic.baseline.format import Baseline, Entry, load, write_atomic
from flake8_hermetic.checker import STALE_CODE, stale_message, stale_summary
from flake8_hermetic.cli import common
from flake8_hermetic.cli.baseline import follow_renames
from flake8_hermetic.collect import Found, Scan


def _baseline_for_check(result: Scan, explicit: str | None) -> Baseline:
    if not explicit and result.settings.baseline_path is None:
        return Baseline(result.baseline_path)  # --hermetic-no-baseline in the config
    return load(common.shown(result.baseline_path))


def check_report(result: Scan, baseline: Baseline) -> reporting.Report:
    """What flake8 with the plugin would report, matched exactly as the plugin does."""
    new: list[Found] = []
    stale: list[Found] = []
    accepted: list[Found] = []
    stale_at: dict[Found, tuple[str, int]] = {}
    baselined = 0
    for path, (unaccepted, stale_entries) in ratchet.judge(baseline, common.judged(result, False)).items():
        linted = result.files[path]
        baselined += len(linted.violations) - len(unaccepted)
        new.extend(f for f in unaccepted if result.visible(f))
        left = Counter(unaccepted)
        for found in linted.violations:
            if left[found] > 0:
                left[found] -= 1
            elif result.visible(found):
                accepted.append(found)
        if STALE_CODE in result.enabled:
            for entry, message in _stale_messages(result, baseline, sorted(stale_entries)):
                report = result.stale_report(linted, message, entry.scope)
                if result.visible(report):
                    stale.append(report)
                    stale_at[report] = (common.shown(baseline.path), entry.line)
    return reporting.Report(new + result.problems, stale, baselined, accepted, stale_at, common.shown(baseline.path),
                            files=result.test_files)


def _stale_messages(result: Scan, baseline: Baseline, entries: list[Entry]) -> list[tuple[Entry, str]]:
    """HRM900's message for each stale entry. A buffer read from stdin (an
    editor's, often half-written) gets one line for all of them, as the
    plugin gives it under plain flake8."""
    root = result.settings.config_dir
    if result.settings.stdin and len(entries) > 1:
        return [(entries[0], stale_summary(entries, baseline.path, root))]
    return [(entry, stale_message(entry, baseline.path, root)) for entry in entries]


def _output_arguments(args: argparse.Namespace) -> list[str]:
    """The output flags, handed to flake8 so its config's ``show-source``,
    ``statistics`` and ``count`` count too; read back from its options."""
    extra = []
    if args.show_source is not None:
        extra.append("--show-source" if args.show_source else "--no-show-source")
    extra += [flag for flag, on in (("--statistics", args.statistics), ("--count", args.count)) if on]
    if args.color:
        extra.append(f"--color={args.color}")
    # not --output-file: flake8 appends a preliminary option's value after the argv, past the
    # ``--`` before the paths, where it reads as two more paths (command_check writes it)
    if args.no_baseline:
        extra.append("--hermetic-no-baseline")
    if args.stdin_display_name is not None:
        extra.append(f"--stdin-display-name={args.stdin_display_name}")
    return extra


def _render(args: argparse.Namespace, result: Scan, report: reporting.Report) -> tuple[str, list[str]]:
    """The report in ``args.format``, and the lines for stderr."""
    options = result.options
    statistics = reporting.statistics_lines(report.findings()) if options.statistics else []
    summary = [] if args.quiet else [report.summary()]
    if args.format in ("default", "pylint"):
        stream = None if args.output_file else sys.stdout
        color = terminal.use_color(options.color, stream)
        text = reporting.default(report, color=color, show_source=bool(options.show_source),
                                 statistics=bool(options.statistics), pylint=args.format == "pylint",
                                 summary=not args.quiet)
        return text, []
    if args.format == "github":
        lines = reporting.github(report, summary=False).splitlines()
        return "".join(line + "\n" for line in [*lines, *statistics, *summary]), []
    if args.format == "sarif":
        codes = {*result.enabled, *(f.code for f in report.findings())}
        rules = reporting.rule_help(codes, ruledocs.pages(), common.project_rules(result.settings))
        text = reporting.sarif(report, rules, result.root)
    else:
        text = reporting.json_findings(report)
    return text, [*statistics, *summary]  # stdout stays one JSON document


def _read_stdin(args: argparse.Namespace) -> None:
    """``-`` is the buffer on standard input (flake8's and ruff's ``-``); a
    display name with no PATH reads it too, as ruff's ``--stdin-filename``
    does. The buffer is linted alone."""
    if args.stdin_display_name is not None and not args.paths:
        args.paths = ["-"]
    if "-" in args.paths and len(args.paths) > 1:
        raise common.CommandError("flake8-hermetic: '-' (the buffer on standard input) is linted alone; "
                                  "give no other PATH with it")
    if args.stdin_display_name is not None and not args.stdin_display_name.strip():
        raise common.CommandError("flake8-hermetic: --stdin-display-name: give the buffer's path, not an empty name")
    if args.paths == ["-"]:
        from flake8.utils import stdin_get_value

        try:
            stdin_get_value()  # read once, and kept for flake8 (it caches it): undecodable text is one line here
        except UnicodeDecodeError as exc:
            raise common.CommandError(
                f"flake8-hermetic: {args.stdin_display_name or '-'} (standard input): cannot decode byte "
                f"{exc.start}: {exc.reason} (not UTF-8, nor the encoding its coding line declares)"
            ) from None


def _project_of(directory: str) -> str | None:
    """The directory a run from ``directory`` takes its configuration from:
    the nearer of the flake8 config flake8 finds and the ``pyproject.toml``
    with a ``[tool.flake8-hermetic]`` table."""
    from flake8_hermetic.root import find_pyproject
    from flake8_hermetic.settings import flake8_config_in, read_pyproject_table

    while not os.path.isdir(directory):  # a new buffer in a folder not made yet
        directory = os.path.dirname(directory)
    config = flake8_config_in(directory)
    found = [os.path.dirname(config)] if config else []
    pyproject = find_pyproject(directory)
    if pyproject and read_pyproject_table(pyproject):
        found.append(os.path.dirname(pyproject))
    return max(found, key=len) if found else None


@contextlib.contextmanager
def _in_the_buffers_project(args: argparse.Namespace) -> Iterator[Callable[[reporting.Report], reporting.Report]]:
    """A buffer on stdin is linted with the configuration of the project
    its display name is in, as ruff's ``--stdin-filename`` is: where that is
    not the project of the working directory (an editor run from a
    monorepo's top, say), the scan runs from the buffer's project, and the
    findings are shown under the display name as given. Yields what maps
    the report back to those names."""
    same: Callable[[reporting.Report], reporting.Report] = lambda report: report  # noqa: E731
    if args.paths != ["-"] or args.stdin_display_name is None or args.config:
        yield same
        return
    display = args.stdin_display_name
    project = _project_of(os.path.dirname(os.path.abspath(display)))
    if project is None or project == _project_of(os.getcwd()):
        yield same
        return
    here = os.getcwd()
    for name in ("baseline", "output_file"):  # paths the user typed: from their working directory
        if getattr(args, name):
            setattr(args, name, os.path.abspath(getattr(args, name)))
    args.stdin_display_name = os.path.relpath(os.path.abspath(display), project)
    os.chdir(project)
    try:
        yield lambda report: _renamed(report, args.stdin_display_name, display)
    finally:
        os.chdir(here)


def _renamed(report: reporting.Report, linted_as: str, shown_as: str) -> reporting.Report:
    """The report with the buffer's findings under the name the user gave it."""
    def name(found: Found) -> Found:
        return dataclasses.replace(found, filename=shown_as) if found.filename == linted_as else found

    return dataclasses.replace(
        report, new=[name(f) for f in report.new], stale=[name(f) for f in report.stale],
        accepted=[name(f) for f in report.accepted], stale_at={name(f): at for f, at in report.stale_at.items()},
    )


def _what_exclude_left_out(args: argparse.Namespace, result: Scan) -> str:
    """The stderr line when flake8's ``exclude`` leaves out files pytest
    would collect (a plain flake8 run has no summary to say it in)."""
    if args.quiet or args.paths == ["-"]:
        return ""
    return reporting.excluded_line(result.excluded_test_files())


def command_check(args: argparse.Namespace) -> int:
    if args.no_baseline and args.baseline:
        raise common.CommandError("flake8-hermetic: --baseline and --no-baseline contradict each other")
    args.format = reporting.ALIASES.get(args.format, args.format)
    _read_stdin(args)
    with _in_the_buffers_project(args) as shown_as:
        result = common.prepare_scan(args, _output_arguments(args))
        baseline = _baseline_for_check(result, args.baseline)
        result.run()
        left_out = _what_exclude_left_out(args, result)
        try:
            common.require_test_files(result)
        except common.CommandError as exc:
            if not left_out:
                raise
            # one line: the error, then what the exclude left out
            raise common.CommandError(f"{exc}; {left_out.removeprefix('flake8-hermetic: ')}") from None
        baseline, _ = follow_renames(result, baseline, common.judged(result, False))  # a renamed file keeps its debt
        report = check_report(result, baseline)
    report = shown_as(report)
    text, to_stderr = _render(args, result, report)
    output_file = args.output_file  # -o: written here (flake8 does not read it from a config either)
    if output_file:
        try:
            write_atomic(output_file, text)
        except OSError as exc:
            raise common.CommandError(f"flake8-hermetic: cannot write {output_file}: {exc.strerror}") from None
    elif args.quiet < 2:
        sys.stdout.write(text)
    for line in [*to_stderr, left_out] if args.quiet < 2 else []:
        if line:
            print(line, file=sys.stderr)
    count = len(report.new) + len(report.stale)
    if result.options.count and args.quiet < 2:
        # flake8 prints it last, on standard output; stdout of json/sarif stays one document
        print(count, file=sys.stderr if to_stderr and not output_file else sys.stdout)
    if args.exit_zero:
        return 0
    return 1 if report.new or report.stale else 0


def add_parser(commands: Any) -> None:
    check = commands.add_parser("check", help="lint with the pack's rules and the baseline; print what is new")
    common.lint_options(check)
    check.add_argument("--format", "--output-format", dest="format", default="default", metavar="FORMAT",
                       choices=[*reporting.FORMATS, *reporting.ALIASES],
                       help=f"output format: {', '.join(reporting.FORMATS)} (--output-format, ruff's spelling, "
                            "takes ruff's concise for default)")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when violations are found (as flake8's)")
    check.add_argument("--no-baseline", action="store_true", help="ignore the baseline: report every violation")
    check.add_argument("--stdin-display-name", "--stdin-filename", dest="stdin_display_name", metavar="PATH",
                       help="the path of the buffer read from stdin (PATH '-'): it decides whether the buffer is "
                            "a test file and which baseline entries apply (--stdin-filename, ruff's spelling)")
    output = check.add_argument_group("flake8's output options (flake8's meaning)")
    output.add_argument("--show-source", action="store_true", default=None,
                        help="show the source line of each finding, with a caret under its column")
    output.add_argument("--no-show-source", action="store_false", dest="show_source",
                        help="negate --show-source (also a show-source = true in the flake8 config)")
    output.add_argument("--statistics", action="store_true", help="count the findings per code (COUNT CODE MESSAGE)")
    output.add_argument("--count", action="store_true", help="print the number of findings last")
    output.add_argument("-o", "--output-file", metavar="FILE",
                        help="write the report to FILE (replaced whole) instead of stdout")
    output.add_argument("--color", choices=terminal.COLOR_CHOICES,
                        help="colour the default format: auto (a terminal, unless NO_COLOR is set), always, never")
    output.add_argument("-q", "--quiet", action="count", default=0,
                        help="ruff's meaning: the findings without the summary line; -qq prints nothing "
                             "(the exit status and --output-file still tell)")
    check.set_defaults(handler=command_check)
