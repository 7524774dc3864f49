"""The project root: the one directory every baseline path is relative to.

Kept light (no flake8, no rules) so the runtime guard can find it at the
end of every pytest session without importing the static side.
"""

from __future__ import annotations

import configparser
import os
from typing import Any


def find_pyproject(start: str) -> str | None:
    """The nearest ``pyproject.toml`` at or above ``start``."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def configures_pack(config_path: str | None) -> bool:
    """Does this flake8 config set any of the pack's options (``hermetic-*``)?"""
    if not config_path or not os.path.isfile(config_path):
        return False
    parser = configparser.RawConfigParser()
    try:
        parser.read(config_path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return False
    return parser.has_section("flake8") and any(
        key.replace("_", "-").startswith("hermetic-") for key in parser.options("flake8")
    )


def project_root(config_path: str | None, pyproject: str | None, table: dict[str, Any]) -> str:
    """The directory of the config that configures the pack.

    A flake8 config that sets a ``hermetic-*`` option, else a pyproject with
    a ``[tool.flake8-hermetic]`` table, else the flake8 config flake8 uses,
    else the current directory. Baseline paths, the ``test-files`` globs and
    SARIF's ``%SRCROOT%`` are all relative to it: the plugin, every command
    and the runtime guard (:mod:`flake8_hermetic.guard.locate`) use this one
    definition.
    """
    if config_path and configures_pack(config_path):
        return os.path.dirname(config_path)
    if pyproject and table:
        return os.path.dirname(pyproject)
    if config_path:
        return os.path.dirname(config_path)
    return os.path.abspath(".")


def real_location(path: str) -> str:
    """``path`` with the symlinks of its directory resolved (the file itself
    may be absent, or a symlink of its own, judged by its writer)."""
    absolute = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))


def inside(path: str, root: str) -> bool:
    """Is ``path`` (absolute) the directory ``root`` or under it, where it
    really is? The directories on the way are resolved first: a committed
    symlink ``ci -> ../elsewhere`` must not take ``ci/baseline.txt`` (its
    lock and its temporary files) out of the project."""
    return lexically_inside(real_location(path), os.path.realpath(root))


def lexically_inside(path: str, root: str) -> bool:
    """Is ``path`` under ``root``, comparing the two as written?"""
    try:
        relative = os.path.relpath(path, root)
    except ValueError:  # another drive on Windows
        return False
    return relative != ".." and not relative.startswith(".." + os.sep) and not os.path.isabs(relative)
