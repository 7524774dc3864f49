"""The flake8 entry point: the ``HRM`` tree plugin."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import multiprocessing
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from flake8.style_guide import Decision, DecisionEngine
from flake8.violation import Violation as Flake8Violation

from flake8_hermetic import __version__, selection
from flake8_hermetic.baseline import Baseline, BaselineError, Entry, load, match
from flake8_hermetic.baseline.format import entry_path
from flake8_hermetic.catalog import all_rules
from flake8_hermetic.engine import Engine
from flake8_hermetic.facts.hostpins import conftest_pins, directory_pins
from flake8_hermetic.patterns import PatternRuleSet, load_pattern_rules
from flake8_hermetic.project import Project, Role, new_run
from flake8_hermetic.rule import Rule
from flake8_hermetic.selection import PackSelection
from flake8_hermetic.settings import ConfigError, Settings, enabled_codes, register, resolve
from flake8_hermetic.source import what_text
from flake8_hermetic.testfiles import to_posix

STALE_CODE = "HRM900"
CONTEXT_SEPARATOR = "\x1f"
# With --hermetic-emit-context, the first result of every file the pack
# walked, followed by the codes judged there and its kind (TEST_KIND or
# not): the commands learn which entries they may call stale, how many test
# files they covered, and line 1's noqa (where HRM900 goes).
LINTED_MARKER = "HRM000 linted"
TEST_KIND = "test"


def fail(message: str) -> None:
    """Stop the run with one line on stderr and exit status 2."""
    print(f"flake8-hermetic: {message}", file=sys.stderr)
    raise SystemExit(2)


class Runtime:
    """What the plugin resolves once per process (flake8 ``--jobs`` forks)."""

    def __init__(
        self, settings: Settings, rules: Sequence[type[Rule]], baseline: Baseline | None,
        patterns: PatternRuleSet | None = None, disable_noqa: bool = False,
    ) -> None:
        self.settings = settings
        self.disable_noqa = disable_noqa
        self.engine = Engine(rules)
        #: the rules of each file role, each its own engine
        self.engines = {role: Engine([rule for rule in rules if role in rule.roles]) for role in Role}
        self.project: Project = new_run()
        self.patterns = patterns if patterns is not None and patterns.rules else None
        self.baseline = baseline
        self.baseline_files = baseline.by_file() if baseline else {}
        #: the retired rules' codes: their baseline entries are stale in every test file
        self.retired = frozenset(code for code, rule in all_rules().items() if rule.retired)


def file_role(runtime: Runtime, filename: str, path: str, tree: ast.Module | None = None) -> Role:
    """The file's role: the ``test-files`` globs when the user gave them
    (``path`` is the file as they are written, from the project root),
    else what pytest's configuration makes of the file."""
    settings = runtime.settings
    if settings.test_files_given:
        if not settings.matcher.matches(path):
            return Role.NOT_TEST
        return Role.CONFTEST if path.rpartition("/")[2] == "conftest.py" else Role.TEST_MODULE
    try:
        return runtime.project.role(filename, tree)
    except ConfigError as exc:
        if multiprocessing.current_process().name == "MainProcess":
            fail(str(exc))
        # a config below the linted paths, met in a --jobs worker (exiting there would hang
        # flake8's pool): the one line, once per worker, and pytest's defaults below it
        print(f"flake8-hermetic: {exc}", file=sys.stderr)
        return runtime.project.role(filename, tree)


def check_pytest_configs(runtime: Runtime, options: argparse.Namespace) -> None:
    """Read the pytest configuration of each path flake8 was given, in the
    main process: a malformed one is a :class:`ConfigError` here (a
    ``--jobs`` worker cannot report it once)."""
    paths = list(getattr(options, "filenames", None) or ["."])
    for path in paths:
        if path == "-":
            path = getattr(options, "stdin_display_name", None) or "."
            path = os.path.dirname(path) or "."
        directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        runtime.project.configs.for_directory(directory)
        for problem in runtime.project.configs.take_problems():
            raise problem


def warn_if_inert(options: argparse.Namespace, settings: Settings, shown: frozenset[str]) -> None:
    """One line on stderr when flake8's selection leaves out every HRM code
    (``shown``: the pack's codes flake8's own options let through) while the
    project has adopted the pack (a config sets its options, or a baseline
    exists): plain ``flake8``, an editor and the flake8 hook would
    otherwise pass having checked nothing. Once per run: only flake8's main
    process says it (``--jobs`` workers started by spawn, as on
    macOS and Windows, parse the options again). A project
    that never configured the pack is not told: the pack may simply be
    installed in a shared environment."""
    if settings.emit_context or not settings.configured or shown - {STALE_CODE}:
        return
    if multiprocessing.current_process().name != "MainProcess":
        return
    select = getattr(options, "select", None)
    if select:
        why, fix = f"selection (select = {','.join(select)}) leaves", "add HRM to select (or extend-select = HRM)"
    else:
        why, fix = "ignore lists (ignore, extend-ignore) leave", "take HRM out of them"
    print(
        f"flake8-hermetic: flake8's {why} out every HRM code, so the pack checks nothing here; {fix}",
        file=sys.stderr,
    )


#: flake8's exit status when the pack's configuration is broken (see docs/configuration.md)
BROKEN_STATUS = 2


def _running_application() -> Any:
    """The flake8 ``Application`` whose option parsing called the plugin, if any
    (the command-line ``flake8``; not the legacy API, not the pack's commands)."""
    try:
        from flake8.main.application import Application
    except ImportError:  # pragma: no cover - flake8 moved its internals
        return None
    frame = sys._getframe(1)
    while frame is not None:
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, Application):
            return candidate
        frame = frame.f_back  # type: ignore[assignment]
    return None


def report_broken(options: argparse.Namespace, problem: str) -> None:
    """A configuration the pack cannot use. The pack's commands stop (one
    line, exit 2: they run nothing else). Plain ``flake8`` (a pre-commit
    hook, an editor) goes on without the pack, so pycodestyle, pyflakes and
    the other plugins still report: the one line once, on stderr, from the
    main process, and flake8 exits with status 2 whatever it found. Where
    no flake8 command line runs (its options parsed by another program),
    the run stops with the line and status 2, as the commands do."""
    if getattr(options, "hermetic_emit_context", False):
        fail(problem)
    if multiprocessing.current_process().name != "MainProcess":
        return  # a --jobs worker started by spawn: the main process said it
    application = _running_application()
    if application is None:
        fail(problem)  # flake8's options parsed outside its command line: no exit status to set, so stop
    print(f"flake8-hermetic: {problem}", file=sys.stderr)
    application.exit_code = lambda: BROKEN_STATUS


def release_named(options: argparse.Namespace, table: PackSelection, off: list[str]) -> None:
    """The off-by-default rules the table names leave flake8's default
    ignore list (where the pack's off-by-default codes wait, so that flake8
    alone, without the plugin's own check, keeps them off too), so that
    flake8 shows them."""
    named_by_table = {code for code in off if selection.named(code, table.selectors)}
    if named_by_table:
        options.extended_default_ignore = [
            code for code in options.extended_default_ignore if code not in named_by_table
        ]


def hand_selection_to_flake8(options: argparse.Namespace, table: PackSelection, enabled: frozenset[str]) -> None:
    """What else flake8's own filter must let through for the pack's
    selection to show, written into its options before it builds its style
    guide: HRM900 is selected where it follows the rules (``--select=HRM1``),
    and the table's per-file-ignores (the pack's codes) stand in where
    flake8 has none of its own (the pack's commands hand flake8 the table's)."""
    if STALE_CODE in enabled and DecisionEngine(options).decision_for(STALE_CODE) is not Decision.Selected:
        options.extend_select = [*(options.extend_select or []), STALE_CODE]
    if table.per_file_ignores and not getattr(options, "per_file_ignores", ""):
        options.per_file_ignores = table.per_file_ignores


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
        cls.runtime = None
        try:
            cls.runtime = cls.prepare(options)
        except (ConfigError, BaselineError) as exc:
            cls.runtime = None
            report_broken(options, str(exc))

    @classmethod
    def prepare(cls, options: argparse.Namespace) -> Runtime:
        """Everything a run needs, once per process; a broken configuration raises."""
        rules = all_rules()
        off = [code for code, rule in rules.items() if not rule.default_on]
        settings = resolve(options, frozenset())
        table = selection.table_selection(settings.table, settings.pyproject)
        release_named(options, table, off)
        baseline = None
        if settings.baseline_path and not settings.emit_context:
            baseline = load(settings.baseline_path)
        patterns = None
        pattern_codes: list[str] = []
        if settings.rules_path:
            patterns = load_pattern_rules(settings.rules_path)
            pattern_codes = list(patterns.codes)
        selection.check_option_codes(options, settings.config_path, pattern_codes)
        enabled = selection.pack_enabled(options, table, list(rules), off)
        if patterns is not None:
            # HRM8xx codes are the project's: the same selection decides them
            selected = selection.pack_enabled(options, table, pattern_codes)
            patterns = patterns.only(selected)
            enabled |= selected
        if selection.stale_follows(options, table, enabled):
            enabled |= {STALE_CODE}
        settings = dataclasses.replace(settings, enabled=enabled)
        hand_selection_to_flake8(options, table, enabled)
        warn_if_inert(options, settings, enabled_codes(options, [*rules, *pattern_codes]))
        active = [rule for code, rule in rules.items() if code in enabled]
        # Language servers run flake8 again and again in one process: a
        # conftest is read once per run, not once per server lifetime.
        conftest_pins.cache_clear()
        directory_pins.cache_clear()
        runtime = Runtime(
            settings, active, baseline, patterns, disable_noqa=bool(getattr(options, "disable_noqa", False))
        )
        if not settings.test_files_given:
            check_pytest_configs(runtime, options)
        return runtime

    @classmethod
    def wants(cls, filename: str) -> bool:
        """Would :meth:`run` walk this file (a test file, or one a project
        pattern rule's globs name), judged by its name alone? The commands'
        direct path parses no other file, and reports an unreadable file
        only if it is one of these."""
        return cls._by_name(filename, (Role.TEST_MODULE, Role.CONFTEST, Role.SUPPORT))

    @classmethod
    def must_parse(cls, filename: str) -> bool:
        """Is a parse failure of this file a finding (E999)? Yes for a test module
        or conftest by its name, and for a file a project pattern rule's globs
        name; no for a support module of the test tree (sample data, deliberately
        broken sources): it is read only to find the ``TestCase`` classes that
        would make it a test module, and a file that does not parse has none a
        runner could import."""
        return cls.runtime is None or cls._by_name(filename, (Role.TEST_MODULE, Role.CONFTEST))

    @classmethod
    def _by_name(cls, filename: str, roles: tuple[Role, ...]) -> bool:
        """Is the file, by its name alone, of one of ``roles``, or one a project pattern rule's globs name?"""
        runtime = cls.runtime
        if runtime is None:
            return False
        path = entry_path(filename, runtime.settings.config_dir)
        role = file_role(runtime, filename, path)
        return role in roles or bool(runtime.patterns and runtime.patterns.for_file(path, role is not Role.NOT_TEST))

    def role(self, runtime: Runtime, path: str) -> Role:
        return file_role(runtime, self.filename, path, self.tree if isinstance(self.tree, ast.Module) else None)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        runtime = self.runtime
        if runtime is None:
            return
        settings = runtime.settings
        # Globs and baseline paths are written from the project root,
        # whatever the working directory or the editor's form of the path.
        path = entry_path(self.filename, settings.config_dir)
        role = self.role(runtime, path)
        is_test_file = role is not Role.NOT_TEST
        engine = runtime.engines[role]
        walk = bool(engine.rule_classes)
        # Pattern rules choose their files with their own globs (default: the test files).
        pattern_rules = runtime.patterns.for_file(path, is_test_file) if runtime.patterns else ()
        if not (walk or pattern_rules) or not isinstance(self.tree, ast.Module):
            return
        found = engine.lint(self.tree, self.lines, self.filename, settings) if walk else []
        if pattern_rules:
            assert runtime.patterns is not None
            found.extend(runtime.patterns.lint(self.tree, "".join(self.lines), pattern_rules))
        # Only the codes that ran on this file can make its baseline entries stale.
        judged = {r.code for r in pattern_rules}
        if is_test_file:
            # only the rules of the file's role ran: only their entries can be stale
            judged |= {rule.code for rule in engine.rule_classes} | (settings.enabled & {STALE_CODE})
            judged |= runtime.retired  # a retired rule finds nothing anywhere: its entries are stale
        if settings.emit_context:
            yield from self.with_context(found, judged, is_test_file)
            return
        stale: list[Entry] = []
        if runtime.baseline_files:
            found, stale = self.match_baseline(runtime, path, found, judged)
        for v in sorted(found, key=lambda v: (v.line, v.col, v.code)):
            yield v.line, v.col, v.text, type(self)
        if stale and STALE_CODE in settings.enabled:
            yield from self.stale_reports(stale, settings)

    def with_context(self, found: list[Any], judged: set[str], is_test: bool) -> Iterator[tuple[int, int, str, type]]:
        """``--hermetic-emit-context``: the linted marker, then each violation with its scope and text."""
        kind = TEST_KIND if is_test else "other"
        yield 1, 0, CONTEXT_SEPARATOR.join((LINTED_MARKER, ",".join(sorted(judged)), kind)), type(self)
        source = "".join(self.lines)
        for v in sorted(found, key=lambda v: (v.line, v.col, v.code)):
            what = what_text(source, v.node)
            yield v.line, v.col, CONTEXT_SEPARATOR.join((v.text, v.where, what)), type(self)

    def match_baseline(
        self, runtime: Runtime, path: str, found: list[Any], judged: set[str]
    ) -> tuple[list[Any], list[Entry]]:
        """The violations the baseline of this file (``path``, from the project
        root) does not accept, and its stale entries."""
        entries = runtime.baseline_files.get(path)
        if not entries:
            return found, []
        source = "".join(self.lines)
        # flake8 drops a # noqa'd violation after the plugin reports it; left in,
        # it could take the entry an edited neighbour needs in the loose pass.
        kept: list[Any] = []
        silenced: list[Any] = []
        for v in found:
            (silenced if self.silenced(v, runtime.disable_noqa) else kept).append(v)
        found, stale = match(
            entries,
            kept,
            key=lambda v: (v.where, v.code),
            what=lambda v: what_text(source, v.node),
            enabled=judged,
        )
        found.extend(silenced)
        return found, stale

    def silenced(self, violation: Any, disable_noqa: bool) -> bool:
        """Does a ``# noqa`` comment flake8 honours cover this violation? The
        lines of a flagged multi-line expression count, as flake8 counts a
        multi-line statement's."""
        if disable_noqa:
            return False
        node = violation.node
        last = violation.line
        if isinstance(node, ast.expr) and node.end_lineno:
            last = max(node.end_lineno, last)
        text = "".join(self.lines[violation.line - 1:last])
        probe = Flake8Violation(violation.code, self.filename, violation.line, violation.col, "", text)
        return probe.is_inline_ignored(disable_noqa=False)

    def stale_reports(self, stale: list[Entry], settings: Settings) -> Iterator[tuple[int, int, str, type]]:
        if settings.stdin and len(stale) > 1:
            # An editor buffer is often half-written: one line, not a flood.
            yield 1, 0, f"{STALE_CODE} {stale_summary(stale, self.baseline_path(), settings.config_dir)}", type(self)
            return
        for entry in sorted(stale):
            yield 1, 0, f"{STALE_CODE} {stale_message(entry, self.baseline_path(), settings.config_dir)}", type(self)

    def baseline_path(self) -> str:
        runtime = self.runtime
        return runtime.baseline.path if runtime is not None and runtime.baseline is not None else ""


def readable(entry: Entry) -> str:
    """An entry for people: its fields separated by spaces, no TAB escapes."""
    return f"{entry.where} {entry.code} {entry.what}"


def baseline_name(baseline_path: str, root: str) -> str:
    """The baseline file as messages name it: relative to the project root
    (the same from any working directory, an editor's included), or
    absolute when it lives elsewhere."""
    absolute = os.path.abspath(baseline_path)
    try:
        relative = os.path.relpath(absolute, root)
    except ValueError:  # another drive on Windows
        return absolute
    return absolute if relative == ".." or relative.startswith(".." + os.sep) else to_posix(relative)


def stale_summary(entries: Sequence[Entry], baseline_path: str, root: str) -> str:
    """HRM900's one message for all the stale entries of a buffer read from
    stdin (an editor's, often half-written), the plugin's and ``check``'s."""
    first = entries[0]
    return (
        f"{len(entries)} baseline entries for this file match nothing "
        f"(first: {baseline_name(baseline_path, root)}:{first.line} {readable(first)}); "
        "run 'flake8-hermetic baseline prune'"
    )


def stale_message(entry: Entry, baseline_path: str, root: str) -> str:
    """HRM900's message for one stale entry (the plugin's and ``check``'s):
    where the entry is (``FILE:LINE``) and what it says."""
    return (
        f"stale baseline entry at {baseline_name(baseline_path, root)}:{entry.line}: {readable(entry)}: "
        "the debt was paid; delete the line (flake8-hermetic baseline prune)"
    )
