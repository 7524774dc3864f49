"""Mocks and patches: what a patch call replaces, and whether a name is
patched around a node (by a decorator, a ``with`` block, or earlier in the
function). One vocabulary of mock spellings for every family."""

from __future__ import annotations

import ast
import os
import sys
import sysconfig
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from flake8_hermetic.imports import dotted_name

if TYPE_CHECKING:
    from flake8_hermetic.facts.view import FileView

PATCH_MODULES = frozenset({"unittest.mock", "mock"})
#: the mock classes of unittest.mock (and the mock backport), by their last name
MOCK_CLASSES = frozenset({"Mock", "MagicMock", "AsyncMock", "NonCallableMock", "NonCallableMagicMock"})
#: what makes a mock object: a mock class, or create_autospec
MOCK_FACTORIES = MOCK_CLASSES | {"create_autospec"}
MOCKER_FIXTURES = frozenset({"mocker", "class_mocker", "module_mocker", "package_mocker", "session_mocker"})


@lru_cache(maxsize=None)
def is_stdlib_module(name: str) -> bool:
    """Whether ``name`` is a standard-library module (``os``, ``os.path``,
    ``asyncio.subprocess``), judged without importing anything."""
    top = name.partition(".")[0]
    if top not in sys.stdlib_module_names:
        return False
    if name == top or name == "os.path":
        return True
    base = os.path.join(sysconfig.get_paths()["stdlib"], *name.split("."))
    return os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py"))


def patch_kind(name: str) -> str | None:
    """"patch" or "object" for ``mock.patch`` / ``mock.patch.object`` in any spelling."""
    for suffix, kind in ((".patch.object", "object"), (".patch", "patch")):
        if name.endswith(suffix):
            owner = name[: -len(suffix)]
            if owner in PATCH_MODULES or owner in MOCKER_FIXTURES:
                return kind
    return None


def patch_target(ctx: FileView, call: ast.Call) -> str | None:
    """What a patch call replaces, as a dotted name: ``mock.patch("a.b")`` ->
    ``a.b``; ``mock.patch.object(subprocess.Popen, "_execute_child")`` and
    ``monkeypatch.setattr(subprocess, "Popen", ...)`` -> ``subprocess.Popen._execute_child``
    / ``subprocess.Popen``."""
    name = ctx.call_name(call) or dotted_name(call.func) or ""
    kind = patch_kind(name)
    if kind is None and name.rpartition(".")[2] == "setattr" and name.startswith("monkeypatch"):
        kind = "object"
    if kind is None and name == "patch":
        kind = "patch"  # a local wrapper of mock.patch under the same name
    args = call.args
    if not args:
        return None
    first = args[0]
    if isinstance(first, ast.Constant):
        # mock.patch("a.b"), monkeypatch.setattr("a.b", value)
        return first.value if kind is not None and isinstance(first.value, str) else None
    if kind == "object" and len(args) >= 2:
        owner = ctx.resolve(first) or dotted_name(first)
        attr = args[1]
        if owner is not None and isinstance(attr, ast.Constant) and isinstance(attr.value, str):
            return f"{owner}.{attr.value}"
    return None


def mocked_here(ctx: FileView, node: ast.AST, wanted: Callable[[str], bool]) -> bool:
    """Whether something ``wanted`` is patched around ``node``: by a decorator
    of an enclosing def or class, a ``with`` patch enclosing it, or earlier
    in its function (``monkeypatch.setattr(...)``, ``obj.attr = Mock()``)."""
    return (
        _patched_by_decorator(ctx, wanted)
        or _patched_by_with(ctx, node, wanted)
        or _patched_earlier(ctx, node, wanted)
    )


def _patches(ctx: FileView, call: ast.Call, wanted: Callable[[str], bool]) -> bool:
    target = patch_target(ctx, call)
    return bool(target) and wanted(target)  # type: ignore[arg-type]


def _patched_by_decorator(ctx: FileView, wanted: Callable[[str], bool]) -> bool:
    return any(
        isinstance(decorator, ast.Call) and _patches(ctx, decorator, wanted)
        for scope in ctx.scopes
        for decorator in getattr(scope.node, "decorator_list", ())
    )


def _patched_by_with(ctx: FileView, node: ast.AST, wanted: Callable[[str], bool]) -> bool:
    for ancestor, on_path in ctx.ancestors_in_function(node):
        if isinstance(ancestor, (ast.With, ast.AsyncWith)) and on_path not in ancestor.items:
            for item in ancestor.items:
                manager = item.context_expr
                if isinstance(manager, ast.Call) and _patches(ctx, manager, wanted):
                    return True
    return False


def _patched_earlier(ctx: FileView, node: ast.AST, wanted: Callable[[str], bool]) -> bool:
    """A patch call, or ``obj.attr = Mock()``, on an earlier line of the
    function (not a ``with`` item: that patch ends with its block)."""
    function = ctx.function
    line = getattr(node, "lineno", 0)
    if function is None:
        return False
    scoped: set[int] = set()  # a `with` patch ends with its block: judged by _patched_by_with
    for sub in ast.walk(function):
        if isinstance(sub, ast.withitem):
            scoped.add(id(sub.context_expr))
        if getattr(sub, "lineno", line + 1) > line:
            continue
        if isinstance(sub, ast.Call) and id(sub) not in scoped and _patches(ctx, sub, wanted):
            return True
        if _mock_assigned(sub, wanted):
            return True
    return False


def _mock_assigned(node: ast.AST, wanted: Callable[[str], bool]) -> bool:
    """``obj.attr = Mock()`` (any maker whose last name has ``Mock`` in it) of a ``wanted`` target."""
    if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
        return False
    maker = dotted_name(node.value.func) or ""
    if "Mock" not in maker.rpartition(".")[2]:
        return False
    return any((text := dotted_name(target)) is not None and wanted(text) for target in node.targets)
