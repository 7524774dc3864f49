"""Whether the operator's home and git config are pinned, for a file or a function.

A suite often isolates the host once, in an autouse fixture of a
``conftest.py`` above its tests. Files below such a conftest are exempt from
the home (HRM109) and git-config (HRM115) rules. Each conftest is read and
parsed once per process.

A pin is a write, never a read: ``monkeypatch.setenv("HOME", ...)``,
``os.environ["HOME"] = ...``, ``mock.patch.dict(os.environ, {"HOME": ...})``,
``monkeypatch.setattr(Path, "home", ...)``. Reading ``os.environ["HOME"]``
names the same key and pins nothing.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from flake8_hermetic.facts.names import last_name

HOME_VARIABLES = frozenset({"HOME", "USERPROFILE"})
GIT_CONFIG_VARIABLES = frozenset({"GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"})
PINNED_VARIABLES = HOME_VARIABLES | GIT_CONFIG_VARIABLES
PROJECT_ROOT_MARKERS = (".git", "pyproject.toml", "setup.cfg", "tox.ini", ".flake8")
#: functions whose replacement answers "where is home" for the process
HOME_READER_ATTRIBUTES = frozenset({"home", "expanduser"})
#: methods that write one environment key given as an argument
#: (monkeypatch.setenv/delenv, os.environ.setdefault/pop,
#: EnvironmentVarGuard.set/unset, monkeypatch.setitem(os.environ, ...))
KEY_WRITERS = frozenset({
    "setenv", "delenv", "putenv", "unsetenv", "set", "unset", "setdefault", "pop", "setitem", "delitem",
})
#: pytest hooks that run before any test, in a conftest
SESSION_HOOKS = frozenset({"pytest_configure", "pytest_sessionstart"})


@dataclass(frozen=True)
class Pins:
    home: bool = False
    git_config: bool = False

    def __or__(self, other: Pins) -> Pins:
        return Pins(self.home or other.home, self.git_config or other.git_config)

    def __bool__(self) -> bool:
        return self.home or self.git_config


NO_PINS = Pins()


def _pins_for_keys(keys: Iterable[object]) -> Pins:
    """Pinning ``HOME`` also pins git's global config, which git finds there."""
    home = git = False
    for key in keys:
        if key in HOME_VARIABLES:
            home = True
        elif key in GIT_CONFIG_VARIABLES:
            git = True
    return Pins(home=home, git_config=git or home)


def _constant(node: ast.AST | None) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def mapping_keys(node: ast.AST | None) -> list[object]:
    """The literal keys a mapping expression sets: ``{"HOME": h}``,
    ``dict(os.environ, HOME=h)``, ``{**os.environ, "HOME": h}``."""
    if isinstance(node, ast.Dict):
        return [_constant(key) for key in node.keys if key is not None]
    if isinstance(node, ast.Call) and last_name(node.func) == "dict":
        keys: list[object] = [keyword.arg for keyword in node.keywords if keyword.arg]
        for argument in node.args:
            keys.extend(mapping_keys(argument))
        return keys
    return []


def _call_pins(call: ast.Call) -> Pins:
    method = last_name(call.func)
    args = call.args
    if method in KEY_WRITERS:
        return _pins_for_keys(_constant(a) for a in args[:2])
    if method in ("update", "dict"):
        # os.environ.update(HOME=h), mock.patch.dict(os.environ, {"HOME": h})
        keys: list[object] = [keyword.arg for keyword in call.keywords if keyword.arg]
        for argument in args:
            keys.extend(mapping_keys(argument))
        if method == "dict" and not isinstance(call.func, ast.Attribute):
            return NO_PINS  # a plain dict(...) builds a value, it pins nothing
        return _pins_for_keys(keys)
    if method in ("setattr", "patch", "object"):
        # setattr(Path, "home", f), patch.object(Path, "home"),
        # patch("pathlib.Path.home"), monkeypatch.setattr("os.path.expanduser", f)
        owner_named = len(args) >= 2 and isinstance(args[0], (ast.Name, ast.Attribute))
        if owner_named and _constant(args[1]) in HOME_READER_ATTRIBUTES:
            return Pins(home=True, git_config=True)
        target = _constant(args[0]) if args else None
        if isinstance(target, str) and target.rpartition(".")[2] in HOME_READER_ATTRIBUTES and "." in target:
            return Pins(home=True, git_config=True)
    return NO_PINS


def _subscript_key(target: ast.AST) -> object:
    return _constant(target.slice) if isinstance(target, ast.Subscript) else None


def pin_of(node: ast.AST) -> Pins:
    """What this one node pins (not its children)."""
    if isinstance(node, ast.Call):
        return _call_pins(node)
    if isinstance(node, (ast.Assign, ast.Delete)):
        return _pins_for_keys(_subscript_key(target) for target in node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return _pins_for_keys([_subscript_key(node.target)])
    return NO_PINS


def pin_sites(node: ast.AST) -> Iterator[tuple[int, Pins]]:
    """(line, pins) of every pin under ``node``."""
    for sub in ast.walk(node):
        pins = pin_of(sub)
        if pins:
            yield getattr(sub, "lineno", 0), pins


def pins_in(node: ast.AST) -> Pins:
    """What the code under ``node`` pins."""
    pins = NO_PINS
    for _, found in pin_sites(node):
        pins = pins | found
    return pins


def _is_autouse_fixture(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in func.decorator_list:
        if isinstance(decorator, ast.Call) and last_name(decorator.func) == "fixture":
            for keyword in decorator.keywords:
                if keyword.arg == "autouse" and _constant(keyword.value) is True:
                    return True
    return False


def module_pins(tree: ast.Module) -> Pins:
    """The pins a conftest makes for the tests below it: its module-level
    statements, its session hooks and its autouse fixtures, following the
    calls they make to functions of the same module (``_isolate(monkeypatch)``)."""
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    roots: list[ast.AST] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(stmt.name, stmt)
            if _is_autouse_fixture(stmt) or stmt.name in SESSION_HOOKS:
                roots.append(stmt)
        elif isinstance(stmt, ast.ClassDef):
            # autouse fixtures of a class apply to the class's tests only
            continue
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)) or type(stmt).__name__ == "TryStar":
            for field in ("body", "orelse", "finalbody"):
                pending.extend(getattr(stmt, field, ()))
            for handler in getattr(stmt, "handlers", ()):
                pending.extend(handler.body)
        else:
            roots.append(stmt)
    pins = NO_PINS
    seen: set[int] = set()
    while roots:
        root = roots.pop()
        if id(root) in seen:
            continue
        seen.add(id(root))
        for sub in ast.walk(root):
            pins = pins | pin_of(sub)
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in functions:
                roots.append(functions[sub.func.id])
    return pins


@lru_cache(maxsize=None)
def conftest_pins(path: str) -> Pins:
    """The pins made by one conftest (parsed once per process)."""
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # RecursionError, MemoryError: too deep
        return NO_PINS
    return module_pins(tree)


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
