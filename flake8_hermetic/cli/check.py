"""``flake8-hermetic check``: the pack's findings, matched against the baseline."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from flake8_hermetic import reporting, ruledocs, terminal
from flake8_hermetic.baseline import ratchet
from flake8_hermetic.baseline.format import Baseline, load, write_atomic
from flake8_hermetic.checker import STALE_CODE, stale_message
from flake8_hermetic.cli import common
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
            for entry in sorted(stale_entries):
                message = stale_message(entry, baseline.path, result.settings.config_dir)
                report = result.stale_report(linted, message, entry.scope)
                if result.visible(report):
                    stale.append(report)
                    stale_at[report] = (common.shown(baseline.path), entry.line)
    return reporting.Report(new + result.problems, stale, baselined, accepted, stale_at, common.shown(baseline.path),
                            files=result.test_files)


def _output_arguments(args: argparse.Namespace) -> list[str]:
    """The output flags, handed to flake8 so its config's ``show-source``,
    ``statistics`` and ``count`` count too; read back from its options."""
    extra = []
    if args.show_source is not None:
        extra.append("--show-source" if args.show_source else "--no-show-source")
    extra += [flag for flag, on in (("--statistics", args.statistics), ("--count", args.count)) if on]
    if args.color:
        extra.append(f"--color={args.color}")
    if args.output_file:
        extra.append(f"--output-file={args.output_file}")
    if args.no_baseline:
        extra.append("--hermetic-no-baseline")
    return extra


def _render(args: argparse.Namespace, result: Scan, report: reporting.Report) -> tuple[str, list[str]]:
    """The report in ``args.format``, and the lines for stderr."""
    options = result.options
    statistics = reporting.statistics_lines(report.findings()) if options.statistics else []
    if args.format == "default":
        stream = None if options.output_file else sys.stdout
        color = terminal.use_color(options.color, stream)
        text = reporting.default(report, color=color, show_source=bool(options.show_source),
                                 statistics=bool(options.statistics))
        return text, []
    if args.format == "github":
        text = reporting.github(report)
        head, _, summary = text.rstrip("\n").rpartition("\n")
        return "\n".join(filter(None, [head, *statistics, summary])) + "\n", []
    if args.format == "sarif":
        codes = {*result.enabled, *(f.code for f in report.findings())}
        rules = reporting.rule_help(codes, ruledocs.pages(), common.project_rules(result.settings))
        text = reporting.sarif(report, rules, result.root)
    else:
        text = reporting.json_findings(report)
    return text, [*statistics, report.summary()]  # stdout stays one JSON document


def command_check(args: argparse.Namespace) -> int:
    if args.no_baseline and args.baseline:
        raise common.CommandError("flake8-hermetic: --baseline and --no-baseline contradict each other")
    result = common.prepare_scan(args, _output_arguments(args))
    baseline = _baseline_for_check(result, args.baseline)
    result.run()
    common.require_test_files(result)
    report = check_report(result, baseline)
    text, to_stderr = _render(args, result, report)
    if result.options.output_file:
        try:
            write_atomic(result.options.output_file, text)
        except OSError as exc:
            raise common.CommandError(
                f"flake8-hermetic: cannot write {result.options.output_file}: {exc.strerror}"
            ) from None
    else:
        sys.stdout.write(text)
    for line in to_stderr:
        print(line, file=sys.stderr)
    count = len(report.new) + len(report.stale)
    if result.options.count:
        # flake8 prints it last, on standard output; stdout of json/sarif stays one document
        print(count, file=sys.stderr if to_stderr and not result.options.output_file else sys.stdout)
    if args.exit_zero:
        return 0
    return 1 if report.new or report.stale else 0


def add_parser(commands: Any) -> None:
    check = commands.add_parser("check", help="lint with the pack's rules and the baseline; print what is new")
    common.lint_options(check)
    check.add_argument("--format", choices=reporting.FORMATS, default="default", help="output format")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when violations are found (as flake8's)")
    check.add_argument("--no-baseline", action="store_true", help="ignore the baseline: report every violation")
    output = check.add_argument_group("flake8's output options (flake8's meaning)")
    output.add_argument("--show-source", action="store_true", default=None,
                        help="show the source line of each finding, with a caret under its column")
    output.add_argument("--no-show-source", action="store_false", dest="show_source",
                        help="negate --show-source (also a show-source = true in the flake8 config)")
    output.add_argument("--statistics", action="store_true", help="count the findings per code (COUNT CODE MESSAGE)")
    output.add_argument("--count", action="store_true", help="print the number of findings last")
    output.add_argument("--output-file", metavar="FILE",
                        help="write the report to FILE (replaced whole) instead of stdout")
    output.add_argument("--color", choices=terminal.COLOR_CHOICES,
                        help="colour the default format: auto (a terminal, unless NO_COLOR is set), always, never")
    check.set_defaults(handler=command_check)
