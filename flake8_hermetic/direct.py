"""The direct path: flake8's decisions, without flake8's token machinery.

``flake8-hermetic check`` and the baseline commands run only the pack's
own tree checker (:mod:`flake8_hermetic.collect`). flake8's file checker
would still tokenize every file twice (once for the physical and logical
line checks no HRM rule has, once to map each line to the statement whose
``# noqa`` covers it), which is most of its cost. Here a file is read,
parsed and walked by flake8's own :class:`~flake8.processor.FileProcessor`
and :class:`~flake8.checker.FileChecker` as before; only the tokenizing
steps are left out, and a file is tokenized after all when a ``noqa`` can
matter:

- the file contains ``noqa`` (any case), so a multi-line statement's last
  line may silence a finding on its first: flake8's own line mapping is
  used, exactly as flake8 computes it;
- ``--show-source`` asks for the statement's text as flake8 would show it.

Everything else is flake8's: file discovery, ``exclude``, ``# flake8: noqa``
files, E902 for an unreadable file, E999 for one that does not parse, and
the style guide's select/ignore/per-file-ignores verdicts (read later, by
:class:`~flake8_hermetic.collect.Scan`). The equivalence test
(tests/test_direct.py) holds both paths to the same findings.

``--jobs`` works as flake8's: a pool of worker processes, each file's
results collected and sorted by file name, so the output is the same with
any number of jobs.
"""

from __future__ import annotations

import argparse
import ast
import functools
import gc
import multiprocessing.pool
import re
import signal
from collections.abc import Sequence
from typing import Any

from flake8 import checker as flake8_checker
from flake8 import processor
from flake8.options.parse_args import parse_args
from flake8.plugins.finder import Checkers

from flake8_hermetic.checker import HermeticChecker

_NOQA = re.compile("noqa", re.IGNORECASE)
_FLAKE8 = re.compile("flake8", re.IGNORECASE)

Result = tuple[str, flake8_checker.Results, dict[str, int]]


class _Processor(processor.FileProcessor):
    """flake8's file processor; the source joined once, for the parse and the searches."""

    @functools.cached_property
    def text(self) -> str:
        return "".join(self.lines)

    def build_ast(self) -> ast.AST:
        return ast.parse(self.text)

    def should_ignore_file(self) -> bool:
        # flake8's own test, after a cheap look: most files never say "flake8".
        return bool(_FLAKE8.search(self.text)) and super().should_ignore_file()


class DirectFileChecker(flake8_checker.FileChecker):
    """flake8's file checker with the token passes left out."""

    def _make_processor(self) -> processor.FileProcessor | None:
        try:
            return _Processor(self.filename, self.options)
        except OSError as exc:  # as flake8's: an unreadable file is an E902
            self.report("E902", 0, 0, f"{type(exc).__name__}: {exc}")
            return None

    def run_checks(self) -> Result:
        if self.processor is None or not self.should_process or not HermeticChecker.wants(self.display_name):
            # the plugin would walk nothing here: no parse (flake8's E999 for such
            # a file is one the commands do not show)
            return self.display_name, self.results, self.statistics
        assert isinstance(self.processor, _Processor)
        # flake8 joins the lines of every multi-line statement to find its
        # noqa: that needs the tokens, so they are made only where it can matter.
        self._mapped = bool(self.options.show_source) or (
            not self.options.disable_noqa and bool(_NOQA.search(self.processor.text))
        )
        paused = gc.isenabled()
        if paused:
            # A tree is thousands of small objects, freed by reference counting
            # when the file is done: the cycle collector's passes over them
            # while it is walked cost a fifth of the run and free nothing.
            gc.disable()
        try:
            self.run_ast_checks()
        except SyntaxError as exc:
            if HermeticChecker.must_parse(self.display_name):  # not a support module's sample of broken code
                row, column = self._extract_syntax_information(exc)
                self.report("E999", row, column, f"{type(exc).__name__}: {exc.args[0]}")
        finally:
            if paused:
                gc.enable()
        return self.display_name, self.results, self.statistics

    def report(self, error_code: str | None, line_number: int, column: int, text: str) -> str:
        if error_code is None:
            error_code, text = text.split(" ", 1)
        processor = getattr(self, "processor", None)
        line: str | None = None
        if processor is not None:
            if getattr(self, "_mapped", False):
                line = processor.noqa_line_for(line_number)
            elif 0 < line_number <= len(processor.lines):
                line = processor.lines[line_number - 1]
        self.results.append((error_code, line_number, column, text, line))
        return error_code


# -- the worker pool (flake8's own, pointed at the direct checker) -----------------

_worker: tuple[Checkers, argparse.Namespace] | None = None


def _init_worker(argv: Sequence[str], shared: tuple[Checkers, argparse.Namespace] | None) -> None:
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if shared is None:  # spawned, not forked: parse the options again
        plugins, options = parse_args(argv)
        shared = Checkers(
            tree=[p for p in plugins.checkers.tree if p.obj is HermeticChecker], logical_line=[], physical_line=[],
        ), options
    _worker = shared


def _run_one(filename: str) -> Result:
    assert _worker is not None
    plugins, options = _worker
    return DirectFileChecker(filename=filename, plugins=plugins, options=options).run_checks()


class DirectManager(flake8_checker.Manager):
    """flake8's manager (discovery, job count, serial fallback) running :class:`DirectFileChecker`."""

    def run_serial(self) -> None:
        self.results = [
            DirectFileChecker(filename=filename, plugins=self.plugins, options=self.options).run_checks()
            for filename in self.filenames
        ]

    def run_parallel(self) -> None:
        forked = multiprocessing.get_start_method() == "fork"
        shared = (self.plugins, self.options) if forked else None
        try:
            pool = multiprocessing.Pool(self.jobs, _init_worker, initargs=(self.argv, shared))
        except (OSError, ImportError):
            self.run_serial()
            return
        closed = False
        try:
            # A few files per task: fewer round trips, and the slow files still spread out.
            chunk = max(1, min(8, len(self.filenames) // (self.jobs * 8)))
            self.results = list(pool.imap_unordered(_run_one, self.filenames, chunksize=chunk))
            pool.close()
            pool.join()
            closed = True
        finally:
            if not closed:
                pool.terminate()
                pool.join()


def manager(style_guide: Any, plugins: Checkers, argv: Sequence[str], direct: bool = True) -> flake8_checker.Manager:
    """The file checker manager of a scan: the direct one, or flake8's own."""
    cls = DirectManager if direct else flake8_checker.Manager
    return cls(style_guide=style_guide, plugins=plugins, argv=argv)
