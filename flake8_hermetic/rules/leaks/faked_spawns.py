"""Principle ``faked-spawner``: a child started while the spawner is a fake starts nothing.

pytest-subprocess's fixture (``fp``, ``fake_process``) replaces ``subprocess.Popen`` for the
whole test: every ``Popen``, ``run`` and ``check_output`` it makes is answered by a registered
fake, so no process runs, no directory is written and no git config is read. A test gets the
fixture when its closure, as pytest computes it, holds it under a name the project itself does
not define (a project fixture called ``fp`` is its own, and proves nothing).
"""

from __future__ import annotations

import ast
from typing import Any

from flake8_hermetic.context import Context
from flake8_hermetic.project import enclosing_class, requested_fixtures

#: the fixtures of pytest-subprocess, which fake every child of the test
FAKE_SPAWN_FIXTURES = frozenset({"fp", "fake_process"})


def _outer_scopes(scopes: list[Any]) -> list[Any]:
    """The scopes down to the outermost function: a test or fixture, whose parameters pytest fills
    (a helper nested in it has parameters of its own: ``def write(fp):`` is a file)."""
    outer = []
    for scope in scopes:
        outer.append(scope)
        if scope.kind == "function":
            break
    return outer


def _faked(function: ast.AST, ctx: Context) -> bool:
    scopes = _outer_scopes(ctx.scopes)
    class_name = enclosing_class(scopes)
    return any(
        fixture is None and name in FAKE_SPAWN_FIXTURES
        for name, fixture in ctx.project.closure_fixtures(requested_fixtures(scopes), class_name)
    )


def spawner_faked(ctx: Context) -> bool:
    """Whether the function being visited runs with pytest-subprocess's fake spawner, once per function."""
    outer = next((scope.node for scope in ctx.scopes if scope.kind == "function"), None)
    if outer is None:
        return False
    return ctx.per_function(outer, _faked, names=False)  # one answer for the test and its nested defs
