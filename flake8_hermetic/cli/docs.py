"""``flake8-hermetic rules`` and ``explain``: the rule documentation."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from flake8_hermetic import ruledocs, terminal
from flake8_hermetic.checker import STALE_CODE
from flake8_hermetic.cli import common

CODE_ARGUMENT = re.compile(r"HRM[0-9]{3}", re.IGNORECASE)  # used with fullmatch


def _plain(markdown: str) -> str:
    return re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown)


def _write(args: argparse.Namespace, markdown: str) -> None:
    """The page as text for a terminal (styled when colour is on), or raw."""
    if args.format == "markdown":
        sys.stdout.write(markdown if markdown.endswith("\n") else markdown + "\n")
    else:
        sys.stdout.write(terminal.render(markdown, styled=terminal.use_color(args.color, sys.stdout)))


def command_rules(args: argparse.Namespace) -> int:
    rows = _plain(ruledocs.table()).splitlines()
    settings = common.prepare_scan(args).settings
    extra = [f"| {code} | {summary} | on |" for code, (summary, _) in sorted(common.project_rules(settings).items())]
    stale_row = next((i for i, row in enumerate(rows) if row.startswith(f"| {STALE_CODE} ")), len(rows))
    rows[stale_row:stale_row] = extra
    _write(args, "\n".join(rows))
    return 0


def command_explain(args: argparse.Namespace) -> int:
    code = args.code.upper()
    page = ruledocs.pages().get(code) if CODE_ARGUMENT.fullmatch(code) else None
    if page is None and CODE_ARGUMENT.fullmatch(code):
        page = common.project_rules(common.prepare_scan(args).settings).get(code, (None, None))[1]
    if page is None:
        print(f"flake8-hermetic: unknown rule code {args.code!r} (flake8-hermetic rules lists them)", file=sys.stderr)
        return 2
    _write(args, page)
    return 0


def _output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "markdown"), default="text",
                        help="text for a terminal (default), or the raw markdown")
    parser.add_argument("--color", choices=terminal.COLOR_CHOICES, default="auto",
                        help="bold headings, coloured code: auto (a terminal, unless NO_COLOR is set), always, never")


def add_parser(commands: Any) -> None:
    rules = commands.add_parser("rules", help="the rule table")
    common.config_options(rules)
    _output_options(rules)
    rules.set_defaults(handler=command_rules)
    explain = commands.add_parser("explain", help="one rule's documentation")
    explain.add_argument("code", metavar="HRMnnn")
    common.config_options(explain)
    _output_options(explain)
    explain.set_defaults(handler=command_explain)
