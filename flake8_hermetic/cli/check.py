"""``flake8-hermetic check``: the pack's findings, matched against the baseline."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from flake8_hermetic import reporting, ruledocs
from flake8_hermetic.baseline import ratchet
from flake8_hermetic.baseline.format import Baseline, load
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
    baselined = 0
    for path, (unaccepted, stale_entries) in ratchet.judge(baseline, common.judged(result, False)).items():
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
    result = common.prepare_scan(args)
    baseline = _baseline_for_check(result, args.baseline)
    result.run()
    report = check_report(result, baseline)
    if args.format == "github":
        sys.stdout.write(reporting.github(report))
    elif args.format == "sarif":
        codes = {*result.enabled, *(f.code for f in report.findings())}
        rules = reporting.rule_help(codes, ruledocs.pages(), common.project_rules(result.settings))
        sys.stdout.write(reporting.sarif(report, rules, result.baseline_dir))
        print(report.summary(), file=sys.stderr)  # stdout stays one JSON document
    else:
        sys.stdout.write(reporting.default(report))
    if args.exit_zero:
        return 0
    return 1 if report.new or report.stale else 0


def add_parser(commands: Any) -> None:
    check = commands.add_parser("check", help="lint with the pack's rules and the baseline; print what is new")
    common.lint_options(check)
    check.add_argument("--format", choices=reporting.FORMATS, default="default", help="output format")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when violations are found (as flake8's)")
    check.set_defaults(handler=command_check)
