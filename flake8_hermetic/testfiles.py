"""Which files are test files: the only files the pack walks."""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Sequence

DEFAULT_TEST_FILES = (
    "test_*.py",
    "*_test.py",
    "tests.py",
    "conftest.py",
    "tests/*.py",
    "test/*.py",
    "testing/*.py",
)


def to_posix(path: str, keep_backslashes: bool = False) -> str:
    """A path as the baseline writes it: forward slashes, no ``./`` prefix.

    Backslashes are separators here on every OS, so ``tests\\test_x.py``
    given by a Windows editor matches the POSIX entry; unless
    ``keep_backslashes``: a POSIX file whose name holds one.
    """
    if not keep_backslashes:
        path = path.replace("\\", "/")
    normal = posixpath.normpath(path)
    return "" if normal == "." else normal


class GlobMatcher:
    """Glob matching: a glob without ``/`` matches the file name, one with
    ``/`` matches the path or any tail of it (``tests/*.py`` matches
    ``pkg/tests/sub/test_a.py``; ``*`` crosses directories)."""

    __slots__ = ("_name_globs", "_path_globs")

    def __init__(self, globs: Sequence[str]) -> None:
        self._name_globs = tuple(g for g in globs if "/" not in g)
        self._path_globs = tuple(g for g in globs if "/" in g)

    def matches(self, path: str) -> bool:
        path = to_posix(path)
        name = posixpath.basename(path)
        if any(fnmatch.fnmatchcase(name, g) for g in self._name_globs):
            return True
        return any(
            fnmatch.fnmatchcase(path, g) or fnmatch.fnmatchcase(path, "*/" + g)
            for g in self._path_globs
        )
