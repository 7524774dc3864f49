"""Running flake8's own machinery in-process and collecting the pack's findings.

The commands must see exactly what ``flake8`` sees: the same file
discovery, ``exclude``, config, ``per-file-ignores`` and ``# noqa``. So they
drive flake8's option parsing, its file checker manager (``--jobs`` and
all) and its style guide, with the plugin in its ``--hermetic-emit-context``
mode: each message carries the violation's scope and ``what`` text, the
first result of every walked file is a marker, and the plugin applies no
baseline; the commands match it themselves with the same ``match()``.

Only the pack's own checker runs. The results are read before the style
guide sees them, so the commands can ask, per violation, whether flake8
would have shown it (:meth:`Scan.visible`) after matching it against the
baseline, in the order the plugin does.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from flake8 import exceptions as flake8_exceptions
from flake8 import utils as flake8_utils
from flake8.discover_files import expand_paths
from flake8.formatting.base import BaseFormatter
from flake8.options.parse_args import parse_args
from flake8.plugins.finder import Checkers
from flake8.processor import FileProcessor
from flake8.style_guide import StyleGuideManager
from flake8.violation import Violation as Flake8Violation

from flake8_hermetic import direct
from flake8_hermetic.baseline.format import entry_path
from flake8_hermetic.checker import (
    CONTEXT_SEPARATOR,
    LINTED_MARKER,
    STALE_CODE,
    TEST_KIND,
    HermeticChecker,
    Runtime,
    file_role,
)
from flake8_hermetic.options import ConfigError
from flake8_hermetic.project import Role
from flake8_hermetic.selection import table_arguments
from flake8_hermetic.settings import BASELINE_NAME, Settings

PREFIX = "HRM"
LINTED_CODE = LINTED_MARKER.split()[0]
# flake8's own reports for a file it could not read (E902) or parse (E999):
# shown by `check` whatever the selection, so no test file is skipped silently.
UNREADABLE_CODES = ("E902", "E999")


class ScanError(Exception):
    """flake8 could not start (bad config, bad option); ``str()`` is one line."""


class Interrupted(Exception):
    """Ctrl-C while the checks ran."""


@dataclass(frozen=True)
class Found:
    """One result of the run, in flake8's terms (``col`` counts from 1)."""

    filename: str  # as flake8 names the file (per-file-ignores match on it)
    path: str  # the baseline's name for the file
    line: int
    col: int
    code: str
    message: str
    scope: str = ""
    what: str = ""
    physical_line: str | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        return f"{self.code} {self.message}"


@dataclass
class LintedFile:
    """A file the pack walked: every violation, before the style guide."""

    filename: str
    path: str
    codes: frozenset[str]  # the codes that ran on it: only their entries are judged
    first_line: str | None  # line 1, where HRM900 is reported (its # noqa counts)
    violations: list[Found] = field(default_factory=list)
    test: bool = True  # a test file (else a file only a pattern rule's globs chose)


class _Silent(BaseFormatter):
    """The style guide's formatter: the commands only ask for verdicts."""

    def handle(self, error: Flake8Violation) -> None:
        pass

    def format(self, error: Flake8Violation) -> str | None:
        return None


@dataclass
class Scan:
    """What one run of flake8's engine saw."""

    options: argparse.Namespace
    settings: Settings
    baseline_path: str
    guide: StyleGuideManager
    argv: list[str] = field(repr=False)
    checkers: Checkers = field(repr=False)
    files: dict[str, LintedFile] = field(default_factory=dict)  # by baseline path
    problems: list[Found] = field(default_factory=list)  # E902/E999
    #: the direct path (:mod:`flake8_hermetic.direct`); False runs flake8's own file checker
    direct: bool = True
    #: linting only the files a baseline names (:meth:`narrow_to`), in place of flake8's default ``.``
    narrowed: bool = False

    @property
    def root(self) -> str:
        """The project root: baseline paths are relative to it."""
        return self.settings.config_dir

    @property
    def enabled(self) -> frozenset[str]:
        return self.settings.enabled

    def run(self) -> None:
        """Run the pack through flake8's file checker manager (``--jobs`` and all)."""
        if self.narrowed and not self.options.filenames:
            return  # the baseline names no file that exists: nothing to lint (not flake8's default ``.``)
        manager = direct.manager(self.guide, self.checkers, self.argv, direct=self.direct)
        try:
            manager.start()
            manager.run()
        except (KeyboardInterrupt, flake8_exceptions.EarlyQuit):
            raise Interrupted() from None
        except flake8_exceptions.ExecutionError as exc:
            raise ScanError(f"flake8-hermetic: {exc}") from None
        for filename, results, _ in sorted(manager.results, key=lambda item: item[0]):
            filename = self.as_given(filename)
            path = entry_path(filename, self.root)
            if path in self.files:
                continue  # named twice on the command line: judged once
            linted: LintedFile | None = None
            found: list[Found] = []
            for code, line, col, text, physical_line in results:
                if code == LINTED_CODE:
                    _, codes, kind = (text.split(CONTEXT_SEPARATOR) + ["", ""])[:3]
                    linted = LintedFile(filename, path, frozenset(filter(None, codes.split(","))), physical_line,
                                        test=kind == TEST_KIND)
                elif code.startswith(PREFIX):
                    message, _, context = text.partition(CONTEXT_SEPARATOR)
                    scope, _, what = context.partition(CONTEXT_SEPARATOR)
                    found.append(Found(filename, path, line, (col or 0) + 1, code, message, scope, what,
                                       physical_line))
                elif code in UNREADABLE_CODES and HermeticChecker.wants(filename) and (
                        code != "E999" or HermeticChecker.must_parse(filename)):
                    self.problems.append(Found(filename, path, max(line, 1), (col or 0) + 1, code, text,
                                               physical_line=physical_line))
            if linted is not None:
                linted.violations = found
                self.files[path] = linted

    @property
    def paths(self) -> list[str]:
        """The paths the user typed (none: flake8's default, ``.``)."""
        return self.argv[self.argv.index("--") + 1:] if "--" in self.argv else []

    @property
    def paths_given(self) -> bool:
        return bool(self.paths)

    def narrow_to(self, filenames: Sequence[str]) -> None:
        """Lint only ``filenames`` where no path was typed: what ``prune`` and
        ``baseline check`` judge is the baseline's own files, so the rest of
        the project need not be read. flake8 still decides on each one
        (``exclude``, ``# flake8: noqa``), and the run still counts as one with
        no path typed (entries of files it did not lint are reported)."""
        self.options.filenames = list(filenames)
        self.narrowed = True

    def as_given(self, filename: str) -> str:
        """The file as the user would write it: under a path they typed, as
        flake8 joins it (``./tests/x.py`` for ``./tests``); with no path
        typed, without the ``./`` flake8's default ``.`` puts in front, as
        the baseline writes it. Matching always compares normalised paths."""
        prefix = os.curdir + os.sep
        if not self.paths_given and filename.startswith(prefix):
            return filename[len(prefix):]
        return filename

    @property
    def test_files(self) -> int:
        """How many test files the pack walked."""
        return sum(1 for linted in self.files.values() if linted.test)

    def test_files_in_paths(self) -> int:
        """How many test files a full run on the typed paths (flake8's
        default ``.``) lints: what ``check`` counts, for a run narrowed to
        fewer files (:meth:`narrow_to`). A file this run linted counts as it
        was judged; any other by its name (pytest's configuration or
        ``test-files``), unless a ``# flake8: noqa`` line makes flake8 skip it.
        """
        runtime = HermeticChecker.runtime
        options = self.options
        names = expand_paths(paths=self.paths, stdin_display_name=options.stdin_display_name,
                             filename_patterns=options.filename, exclude=(*options.exclude, *options.extend_exclude))
        seen: set[str] = set()
        count = 0
        for filename in names:
            filename = self.as_given(filename)
            path = entry_path(filename, self.root)
            if path in seen:
                continue
            seen.add(path)
            linted = self.files.get(path)
            if linted is not None:
                count += linted.test
            elif runtime is not None and filename != "-":
                count += _would_lint_as_test(runtime, filename, path, options)
        return count

    def excluded_test_files(self) -> list[str]:
        """The files under the linted paths that flake8's ``exclude`` /
        ``extend-exclude`` (the project's, or the pack's table) leaves out
        but pytest would collect: test modules and conftests by their names
        and pytest's configuration (or ``test-files``). Nothing is parsed;
        hidden directories, ``__pycache__``, ``site-packages`` and
        virtualenvs are not walked (pytest does not collect there either)."""
        runtime = HermeticChecker.runtime
        options = self.options
        patterns = [*options.exclude, *options.extend_exclude]
        if runtime is None or not patterns:
            return []
        found: list[str] = []
        for top in self.paths or [os.curdir]:
            if top == "-" or not os.path.exists(top):
                continue
            if not os.path.isdir(top):
                if _excluded(top, patterns) and _collected_by_name(runtime, self.as_given(top), self.root):
                    found.append(self.as_given(top))
                continue
            for filename in _excluded_python_files(top, patterns):
                filename = self.as_given(filename)
                if _collected_by_name(runtime, filename, self.root):
                    found.append(filename)
        return sorted(set(found))

    def visible(self, found: Found) -> bool:
        """Would flake8 show this result (select/ignore, per-file-ignores, noqa)?"""
        return bool(self.guide.handle_error(
            found.code, found.filename, found.line, found.col - 1, found.message, found.physical_line,
        ))

    def stale_report(self, linted: LintedFile, message: str, scope: str = "") -> Found:
        """HRM900 for a stale entry; ``scope``: the entry's (its node id, in ``--format json``)."""
        return Found(linted.filename, linted.path, 1, 1, STALE_CODE, message, scope, physical_line=linted.first_line)


#: directories pytest does not collect in and the exclude count does not walk
UNWALKED = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages"})


def _excluded(path: str, patterns: Sequence[str]) -> bool:
    """flake8's own test (``matches_filename``): the name or the absolute path matches."""
    name = os.path.basename(path)
    if name not in (".", "..") and flake8_utils.fnmatch(name, patterns):
        return True
    return flake8_utils.fnmatch(os.path.abspath(path), patterns)


def _excluded_python_files(top: str, patterns: Sequence[str]) -> Iterator[str]:
    """The ``.py`` files under ``top`` that ``patterns`` exclude (a file, or a directory above it)."""
    pending = [(top, _excluded(top, patterns))]
    while pending:
        directory, excluded = pending.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError:
            continue
        names = {entry.name for entry in entries}
        if directory != top and "pyvenv.cfg" in names:
            continue  # a virtualenv
        for entry in entries:
            path = os.path.join(directory, entry.name)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if not entry.name.startswith(".") and entry.name not in UNWALKED and not entry.name.endswith(".egg"):
                    pending.append((path, excluded or _excluded(path, patterns)))
            elif entry.name.endswith(".py") and (excluded or _excluded(path, patterns)):
                yield path


def _collected_by_name(runtime: Runtime, filename: str, root: str) -> bool:
    """A test module or conftest by its name alone (never parsed); a
    malformed pytest config below an excluded directory counts as none."""
    settings = runtime.settings
    if settings.test_files_given:  # the user's globs decide, as in ``file_role``
        return settings.matcher.matches(entry_path(filename, root))
    try:
        return runtime.project.role(filename) in (Role.TEST_MODULE, Role.CONFTEST)
    except ConfigError:
        return False


def _would_lint_as_test(runtime: Runtime, filename: str, path: str, options: argparse.Namespace) -> bool:
    """Would the pack walk this file as a test file (the ``test`` of its
    :class:`LintedFile`), judged without linting it: its role has rules,
    and no ``# flake8: noqa`` line makes flake8 skip it. A support module
    whose role has no rule is parsed: its ``TestCase`` classes make it a
    test module. (Any other test file that does not parse counts here, where
    ``check`` reports it, E999, instead.)"""
    role = file_role(runtime, filename, path)
    if role is Role.NOT_TEST:
        return False
    try:
        processor = FileProcessor(filename, options)
        if processor.should_ignore_file():
            return False
        if not runtime.engines[role].rule_classes:
            role = file_role(runtime, filename, path, ast.parse("".join(processor.lines)))
    except (OSError, UnicodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False  # unreadable or unparsable: check reports it (E902, E999), never counts it
    return bool(runtime.engines[role].rule_classes)


def flake8_arguments(
    paths: Sequence[str], config: str | None = None, jobs: str | None = None, extra: Sequence[str] = (),
) -> list[str]:
    """The flake8 command line of a scan; ``extra`` are flake8 options the
    command passes on (``--select=...``, ``--show-source``)."""
    argv = ["--hermetic-emit-context"]
    if config:
        argv += ["--config", config]
    if jobs:
        argv += ["--jobs", jobs]
    argv += extra
    return [*argv, "--", *paths] if paths else argv


def _names_prefix(selector: str) -> bool:
    return bool(selector) and (PREFIX.startswith(selector) or selector.startswith(PREFIX))


def selection_arguments(options: argparse.Namespace) -> list[str]:
    """Extra flake8 options so the pack's default rules run even when the
    project's ``select`` names no ``HRM`` prefix (``select = E,F,W``), as
    if the pack were plain default-on.

    ``--extend-select=HRM`` alone would also turn on the off-by-default
    rules (an explicit select beats flake8's extended default ignore), so
    those are ignored again, unless the project's select/extend-select
    already names them. Prefixes keep their length, so a project's
    ``ignore``/``per-file-ignores`` of ``HRM1`` still wins over ``HRM``.
    """
    select = options.select
    if select is None or any(_names_prefix(s) for s in select):
        return []
    chosen = tuple(s for s in (*select, *(options.extend_select or [])) if s)
    off = [
        code for code in options.extended_default_ignore
        if code.startswith(PREFIX) and not code.startswith(chosen)
    ]
    extra = [f"--extend-select={','.join([*(options.extend_select or []), PREFIX])}"]
    if off:
        extra.append(f"--extend-ignore={','.join([*(options.extend_ignore or []), *off])}")
    return extra


@contextlib.contextmanager
def _one_line_errors() -> Iterator[None]:
    """flake8's option errors print its usage, then the message: keep the message."""
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            yield
    except SystemExit as exc:
        if exc.code in (0, None):
            raise
        lines = [line for line in captured.getvalue().splitlines() if line.strip()]
        raise ScanError(lines[-1] if lines else f"flake8-hermetic: flake8 exited with status {exc.code}") from None
    sys.stderr.write(captured.getvalue())


def configure(argv: Sequence[str]) -> tuple[list[str], argparse.Namespace, Checkers]:
    """Parse flake8's options and config; the final argv, options, and the pack's checker."""
    argv = list(argv)
    with _one_line_errors():
        extra = table_arguments(argv)  # [tool.flake8-hermetic]'s select, exclude, ...
        if extra:
            split = argv.index("--") if "--" in argv else len(argv)
            argv[split:split] = extra
        plugins, options = parse_args(argv)
        extra = selection_arguments(options)
        if extra:
            split = argv.index("--") if "--" in argv else len(argv)
            argv[split:split] = extra
            plugins, options = parse_args(argv)
    ours = [plugin for plugin in plugins.checkers.tree if plugin.obj is HermeticChecker]
    if not ours:
        raise ScanError("flake8-hermetic: flake8 did not load the plugin (is flake8-hermetic installed here?)")
    return argv, options, Checkers(tree=ours, logical_line=[], physical_line=[])


def current_settings() -> Settings:
    runtime = HermeticChecker.runtime
    assert runtime is not None, "flake8 did not call the plugin's parse_options"
    return runtime.settings


def baseline_location(settings: Settings, explicit: str | None) -> str:
    """The baseline the commands read and write: ``--baseline``, else the
    one the plugin would read, else the default name in the project root."""
    if explicit:
        return os.path.abspath(explicit)
    return settings.baseline_path or os.path.join(settings.config_dir, BASELINE_NAME)


def prepare(
    paths: Sequence[str],
    *,
    config: str | None = None,
    jobs: str | None = None,
    baseline: str | None = None,
    extra: Sequence[str] = (),
) -> Scan:
    """Resolve flake8's options and config for a run on ``paths`` (flake8's
    default: ``.``): where the baseline is, which codes are enabled. The
    checks run on :meth:`Scan.run`, so a broken baseline can be refused first."""
    argv, options, checkers = configure(flake8_arguments(paths, config, jobs, extra))
    settings = current_settings()
    guide = StyleGuideManager(options, _Silent(options))
    return Scan(options, settings, baseline_location(settings, baseline), guide, argv, checkers)
