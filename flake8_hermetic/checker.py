"""The flake8 entry point: the ``HRM`` tree plugin."""

from __future__ import annotations

import argparse
import ast
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from flake8_hermetic import __version__
from flake8_hermetic.baseline import Baseline, BaselineError, Entry, load, match
from flake8_hermetic.engine import Engine, what_text
from flake8_hermetic.registry import Rule, Violation, all_rules
from flake8_hermetic.settings import ConfigError, Settings, enabled_codes, register, resolve
from flake8_hermetic.testfiles import to_posix

STALE_CODE = "HRM900"
CONTEXT_SEPARATOR = "\x1f"


def fail(message: str) -> None:
    """Stop the run with one line on stderr and exit status 2."""
    print(f"flake8-hermetic: {message}", file=sys.stderr)
    raise SystemExit(2)


class Runtime:
    """What the plugin resolves once per process (flake8 ``--jobs`` forks)."""

    def __init__(self, settings: Settings, rules: Sequence[type[Rule]], baseline: Baseline | None) -> None:
        self.settings = settings
        self.engine = Engine(rules)
        self.baseline = baseline
        self.baseline_files = baseline.by_file() if baseline else {}
        self.baseline_dir = baseline.directory if baseline else settings.config_dir


class HermeticChecker:
    name = "flake8-hermetic"
    version = __version__

    runtime: ClassVar[Runtime | None] = None

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        self.tree = tree
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, parser: Any) -> None:
        register(parser)
        parser.extend_default_ignore(
            [code for code, rule in all_rules().items() if not rule.default_on]
        )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        rules = all_rules()
        enabled = enabled_codes(options, [*rules, STALE_CODE])
        try:
            settings = resolve(options, enabled)
            baseline = None
            if settings.baseline_path and not settings.emit_context:
                baseline = load(settings.baseline_path)
        except (ConfigError, BaselineError) as exc:
            fail(str(exc))
        active = [rule for code, rule in rules.items() if code in enabled]
        cls.runtime = Runtime(settings, active, baseline)

    def relative_path(self, runtime: Runtime) -> str:
        path = to_posix(self.filename)
        if not os.path.isabs(path):
            path = os.path.abspath(path)
        return to_posix(os.path.relpath(path, runtime.baseline_dir))

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        runtime = self.runtime
        if runtime is None or not runtime.engine.rule_classes:
            return
        settings = runtime.settings
        if not settings.matcher.matches(self.filename) or not isinstance(self.tree, ast.Module):
            return
        found = runtime.engine.lint(self.tree, self.lines, self.filename, settings)
        if settings.emit_context:
            source = "".join(self.lines)
            for v in sorted(found, key=lambda v: (v.line, v.col, v.code)):
                what = what_text(source, v.node)
                yield v.line, v.col, CONTEXT_SEPARATOR.join((v.text, v.where, what)), type(self)
            return
        stale: list[Entry] = []
        if runtime.baseline_files:
            entries = runtime.baseline_files.get(self.relative_path(runtime))
            if entries:
                source = "".join(self.lines)
                found, stale = match(
                    entries,
                    found,
                    key=lambda v: (v.where, v.code),
                    what=lambda v: what_text(source, v.node),
                    enabled=settings.enabled,
                )
        for v in sorted(found, key=lambda v: (v.line, v.col, v.code)):
            yield v.line, v.col, v.text, type(self)
        if stale and STALE_CODE in settings.enabled:
            yield from self.stale_reports(stale, settings)

    def stale_reports(self, stale: list[Entry], settings: Settings) -> Iterator[tuple[int, int, str, type]]:
        if settings.stdin and len(stale) > 1:
            # An editor buffer is often half-written: one line, not a flood.
            yield 1, 0, (
                f"{STALE_CODE} {len(stale)} baseline entries for this file match nothing "
                f"(first: {stale[0].render()!r}); run 'flake8-hermetic baseline prune'"
            ), type(self)
            return
        for entry in sorted(stale):
            yield 1, 0, (
                f"{STALE_CODE} stale baseline entry {entry.render()!r}: "
                "the debt was paid; delete the line (flake8-hermetic baseline prune)"
            ), type(self)
