"""File roles: what pytest makes of a file, from its configuration.

- ``TEST_MODULE``: a module pytest collects: its name matches
  ``python_files`` and no directory between the rootdir and it matches
  ``norecursedirs`` or is a virtualenv (holds ``pyvenv.cfg``). ``testpaths`` is no boundary: it is only where pytest
  looks when given no path, and ``pytest tests/integration`` collects a
  matching module outside it just the same. A support module
  that defines ``unittest.TestCase`` classes counts too: its cases run
  wherever a collected module imports them (a shared base of tests).
- ``CONFTEST``: a ``conftest.py``.
- ``SUPPORT``: any other Python file of the test tree (helpers, child
  scripts, sample modules, benchmarks). A directory belongs to the test
  tree when it or a directory above it (up to the rootdir) holds a
  ``conftest.py``, is (under) a ``testpaths`` entry or is named ``test``,
  ``tests`` or ``testing``, or when it holds a collected test module.
- ``NOT_TEST``: everything else.

The user's ``test-files`` globs, when given, decide instead: a match is a
test module (or a conftest), anything else is not test code.
"""

from __future__ import annotations

import ast
import enum
import os
from fnmatch import fnmatchcase

from flake8_hermetic.project.config import PytestConfig

TEST_DIRECTORY_NAMES = frozenset({"test", "tests", "testing"})
#: files that mark a project's root when no pytest config names one
PROJECT_ROOT_MARKERS = (".git", "pyproject.toml", "setup.cfg", "tox.ini", ".flake8", "setup.py")


class Role(enum.Enum):
    TEST_MODULE = "test module"
    CONFTEST = "conftest"
    SUPPORT = "support module"
    NOT_TEST = "not test code"


TEST_CODE = frozenset({Role.TEST_MODULE, Role.CONFTEST})


def matches_python_files(path: str, patterns: tuple[str, ...]) -> bool:
    """pytest's ``fnmatch_ex``: a pattern without a separator matches the
    file name, one with a separator the end of the path."""
    name = os.path.basename(path)
    posix = path.replace(os.sep, "/")
    for pattern in patterns:
        if "/" in pattern or os.sep in pattern:
            pattern = pattern.replace(os.sep, "/")
            if fnmatchcase(posix, pattern if pattern.startswith("/") else "*/" + pattern):
                return True
        elif fnmatchcase(name, pattern):
            return True
    return False


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _under_testpaths(path: str, config: PytestConfig) -> bool:
    rootdir = config.rootdir or ""
    for entry in config.testpaths:
        target = os.path.normpath(os.path.join(rootdir, entry))
        if any(c in entry for c in "*?["):
            probe = path
            while probe != os.path.dirname(probe):
                if fnmatchcase(probe, target):
                    return True
                probe = os.path.dirname(probe)
        elif _inside(path, target):
            return True
    return False


class RoleFinder:
    """Roles of files, with the directories' facts kept per run."""

    def __init__(self) -> None:
        self._listings: dict[str, tuple[str, ...]] = {}
        self._roots: dict[str, str | None] = {}
        #: (directory, config path) -> whether the directory belongs to the test tree
        self._trees: dict[tuple[str, str | None], bool] = {}

    def listing(self, directory: str) -> tuple[str, ...]:
        found = self._listings.get(directory)
        if found is None:
            try:
                found = tuple(os.listdir(directory))
            except OSError:
                found = ()
            self._listings[directory] = found
        return found

    def project_root(self, directory: str) -> str | None:
        """The nearest directory holding a project root marker."""
        if directory in self._roots:
            return self._roots[directory]
        names = self.listing(directory)
        if any(marker in names for marker in PROJECT_ROOT_MARKERS):
            found: str | None = directory
        else:
            parent = os.path.dirname(directory)
            found = None if parent == directory else self.project_root(parent)
        self._roots[directory] = found
        return found

    def base_of(self, directory: str, config: PytestConfig) -> str:
        """Where collection starts: the rootdir, else the project root, else the directory."""
        if config.rootdir and _inside(directory, config.rootdir):
            return config.rootdir
        return self.project_root(directory) or directory

    def role(self, path: str, config: PytestConfig) -> Role:
        path = os.path.abspath(path)
        directory = os.path.dirname(path)
        base = self.base_of(directory, config)
        between = self._directories_between(base, directory)
        if os.path.basename(path) == "conftest.py":
            return Role.CONFTEST
        recursed = not any(_norecursed(d, pattern) for d in between for pattern in config.norecursedirs)
        # pytest skips a virtualenv (a directory holding ``pyvenv.cfg``) unless --collect-in-virtualenv
        recursed = recursed and not any("pyvenv.cfg" in self.listing(d) for d in between)
        if recursed and self.collected(path, config):
            return Role.TEST_MODULE
        if self.in_test_tree(directory, between, config):
            return Role.SUPPORT
        return Role.NOT_TEST

    @staticmethod
    def collected(path: str, config: PytestConfig) -> bool:
        """pytest collects the module when given its path or a directory above
        it: its name is all that counts (``testpaths`` bounds nothing)."""
        return matches_python_files(path, config.python_files)

    @staticmethod
    def _directories_between(base: str, directory: str) -> list[str]:
        """``directory`` and its parents below ``base``."""
        found = []
        while _inside(directory, base) and directory != base:
            found.append(directory)
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        return found

    def in_test_tree(self, directory: str, between: list[str], config: PytestConfig) -> bool:
        key = (directory, config.path)
        known = self._trees.get(key)
        if known is None:
            known = self._trees[key] = self._in_test_tree(directory, between, config)
        return known

    def _in_test_tree(self, directory: str, between: list[str], config: PytestConfig) -> bool:
        for candidate in between or [directory]:
            name = os.path.basename(candidate).strip("_")
            if name in TEST_DIRECTORY_NAMES or "conftest.py" in self.listing(candidate):
                return True
        if config.testpaths and _under_testpaths(directory, config):
            return True
        return any(
            self.collected(os.path.join(directory, name), config)
            for name in self.listing(directory) if name.endswith(".py")
        )


def defines_test_cases(tree: ast.Module) -> bool:
    """A module-level class derived from a ``*TestCase`` class: a library of
    test cases that the collected modules importing it run."""
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            for base in stmt.bases:
                name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
                if name.endswith("TestCase"):
                    return True
    return False


def _norecursed(directory: str, pattern: str) -> bool:
    """pytest's ``fnmatch_ex``: a pattern without a separator matches the
    directory's name (``build``); one with a separator matches the end of its
    path (``tests/docker`` matches ``/src/proj/tests/docker``)."""
    if "/" not in pattern and os.sep not in pattern:
        return fnmatchcase(os.path.basename(directory), pattern)
    path = directory.replace(os.sep, "/")
    pattern = pattern.replace(os.sep, "/").rstrip("/")
    return fnmatchcase(path, pattern if pattern.startswith("/") else "*/" + pattern)
