"""``flake8-hermetic prove``: each finding of a leak rule, proven by running its test under the guard.

    flake8-hermetic prove [PATH ...] [--select ... as in check] [--format text|json|github|sarif]
                          [-o FILE] [--timeout S] [-- PYTEST_ARGS ...]

See docs/prove.md. The findings are collected exactly as ``check`` collects
them (selection, ``# noqa``, the baseline's marking); the runs are made by
:mod:`flake8_hermetic.prove.runner`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

from flake8_hermetic import ruledocs
from flake8_hermetic.baseline.format import write_atomic
from flake8_hermetic.checker import STALE_CODE
from flake8_hermetic.cli import common
from flake8_hermetic.cli.check import _baseline_for_check, check_report
from flake8_hermetic.collect import UNREADABLE_CODES, Found
from flake8_hermetic.reporting import rule_help

SEPARATOR = "--"


def split_pytest_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``prove ... -- PYTEST_ARGS``: the command's own arguments, and pytest's."""
    argv = list(argv)
    if argv[:1] == ["prove"] and SEPARATOR in argv:
        split = argv.index(SEPARATOR)
        return argv[:split], argv[split + 1:]
    return argv, []


def _findings(args: argparse.Namespace) -> tuple[list[tuple[Found, bool]], Any]:
    """Every finding ``check`` would report, and those the baseline accepts (marked as such)."""
    result = common.prepare_scan(args)
    baseline = _baseline_for_check(result, args.baseline)
    result.run()
    common.require_test_files(result)
    report = check_report(result, baseline)
    kept = [f for f in report.new if f.code != STALE_CODE and f.code not in UNREADABLE_CODES]
    return [(f, False) for f in kept] + [(f, True) for f in report.accepted], result


def _render(args: argparse.Namespace, proofs: list[Any], result: Any) -> str:
    from flake8_hermetic.prove import report

    if args.format == "json":
        return report.json_proofs(proofs)
    if args.format == "github":
        return report.github(proofs)
    if args.format == "sarif":
        codes = {*result.enabled, *(p.found.code for p in proofs)}
        return report.sarif(proofs, rule_help(codes, ruledocs.pages(), common.project_rules(result.settings)),
                            result.root)
    return report.text(proofs)


def command_prove(args: argparse.Namespace) -> int:
    from flake8_hermetic.prove import report, runner

    if args.timeout <= 0:
        raise common.CommandError("flake8-hermetic: --timeout: give a number of seconds above 0")
    if args.output_file and not os.path.isdir(os.path.dirname(os.path.abspath(args.output_file))):
        raise common.CommandError(f"flake8-hermetic: cannot write {args.output_file}: no such directory")
    findings, result = _findings(args)
    if importlib.util.find_spec("pytest") is None:
        raise common.CommandError(f"flake8-hermetic: pytest is not installed for {sys.executable}; "
                                  "run prove in the project's test environment")
    with tempfile.TemporaryDirectory(prefix="hermetic-prove-") as workdir:
        settings = runner.Settings(result.root, getattr(args, "pytest_args", []), workdir, args.timeout)
        try:
            proofs, runs = runner.prove(findings, settings)
        except runner.ProveError as exc:
            raise common.CommandError(str(exc)) from None
    text = _render(args, proofs, result)
    if args.output_file:
        try:
            write_atomic(args.output_file, text)
        except OSError as exc:
            raise common.CommandError(f"flake8-hermetic: cannot write {args.output_file}: {exc.strerror}") from None
    else:
        sys.stdout.write(text)
    if args.format != "text" or args.output_file:
        print(report.summary(proofs), file=sys.stderr)
    print(report.runs_line(runs), file=sys.stderr)
    return 1 if any(p.proof in ("leaks", "leaks-on-failure") for p in proofs) else 0


def _seconds(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None


def add_parser(commands: Any) -> None:
    from flake8_hermetic.prove.report import FORMATS

    prove = commands.add_parser(
        "prove", help="prove each leak-rule finding by running its test under the guard, with and without a "
                      "failure injected after the line (pytest arguments after --)")
    common.lint_options(prove)
    prove.add_argument("--format", default="text", choices=FORMATS,
                       help=f"output format: {', '.join(FORMATS)}")
    prove.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE instead of stdout")
    prove.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS",
                       help="stop a test still running SECONDS after the failure was injected into it (default 60)")
    prove.set_defaults(handler=command_prove)
