"""Whether the operator's home and git config are pinned for a file.

A suite often isolates the host once, in an autouse fixture of a
``conftest.py`` above its tests. Files below such a conftest are exempt from
the home (HRM109) and git-config (HRM115) rules. Each conftest is read and
parsed once per process.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from functools import lru_cache

HOME_VARIABLES = frozenset({"HOME", "USERPROFILE"})
GIT_CONFIG_VARIABLES = frozenset({"GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"})
PROJECT_ROOT_MARKERS = (".git", "pyproject.toml", "setup.cfg", "tox.ini", ".flake8")


@dataclass(frozen=True)
class Pins:
    home: bool = False
    git_config: bool = False

    def __or__(self, other: Pins) -> Pins:
        return Pins(self.home or other.home, self.git_config or other.git_config)


NO_PINS = Pins()


def pins_in(node: ast.AST) -> Pins:
    """What the code under ``node`` pins: an environment key it names
    (``setenv("HOME", ...)``, ``environ["HOME"] = ...``, a ``patch.dict``
    mapping, an ``env=`` dict) or a patch of ``Path.home``.

    Pinning ``HOME`` also pins git's global config, which git finds there.
    """
    home = git = False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            value = sub.value
            if value in HOME_VARIABLES or value.endswith("Path.home"):
                home = True
            elif value in GIT_CONFIG_VARIABLES:
                git = True
        elif isinstance(sub, ast.Call):
            args = sub.args
            # setattr(Path, "home", ...), patch.object(Path, "home", ...)
            if (
                len(args) >= 2
                and isinstance(args[0], (ast.Name, ast.Attribute))
                and _last_name(args[0]) == "Path"
                and isinstance(args[1], ast.Constant)
                and args[1].value == "home"
            ):
                home = True
    return Pins(home=home, git_config=git or home)


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _is_autouse_fixture(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in func.decorator_list:
        if isinstance(decorator, ast.Call) and _last_name(decorator.func) == "fixture":
            for keyword in decorator.keywords:
                if (
                    keyword.arg == "autouse"
                    and isinstance(keyword.value, ast.Constant)
                    and keyword.value.value is True
                ):
                    return True
    return False


@lru_cache(maxsize=None)
def conftest_pins(path: str) -> Pins:
    """The pins made by the autouse fixtures of one conftest (parsed once)."""
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return NO_PINS
    pins = NO_PINS
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_autouse_fixture(node):
            pins = pins | pins_in(node)
    return pins


@lru_cache(maxsize=None)
def directory_pins(directory: str) -> Pins:
    """Pins from the conftest chain: ``directory`` and its parents up to the
    project root (the first directory holding a root marker)."""
    conftest = os.path.join(directory, "conftest.py")
    pins = conftest_pins(conftest) if os.path.isfile(conftest) else NO_PINS
    is_root = any(os.path.exists(os.path.join(directory, m)) for m in PROJECT_ROOT_MARKERS)
    parent = os.path.dirname(directory)
    if is_root or parent == directory:
        return pins
    return pins | directory_pins(parent)


def pins_for_file(filename: str) -> Pins:
    return directory_pins(os.path.dirname(os.path.abspath(filename)))
