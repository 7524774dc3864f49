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


#: the fake's calls that let real children through (an unregistered command, a passed-through one)
LETS_REAL_CHILDREN = frozenset({"allow_unregistered", "pass_command"})
#: the spawners the fake answers: it replaces ``subprocess.Popen``; ``os.system``, ``os.spawn*`` or
#: ``pexpect`` start real children under it
FAKED_SPAWNERS = ("subprocess.", "asyncio.create_subprocess_", "os.popen")


def _faked(function: ast.AST, ctx: Context) -> bool:
    scopes = _outer_scopes(ctx.scopes)
    outer = scopes[-1] if scopes and scopes[-1].kind == "function" else None
    if outer is None or not (outer.is_test or outer.is_fixture or outer.is_testcase_method):
        return False  # a helper's parameter ``fp`` is a file, not the fixture
    if any(isinstance(sub, ast.Attribute) and sub.attr in LETS_REAL_CHILDREN for sub in ast.walk(function)):
        return False
    class_name = enclosing_class(scopes)
    return any(
        fixture is None and name in FAKE_SPAWN_FIXTURES
        for name, fixture in ctx.project.closure_fixtures(requested_fixtures(scopes), class_name)
    )


def faked_spawner_call(ctx: Context, name: str) -> bool:
    """Whether the spawner ``name`` (a resolved call name) is one the fake answers, in a function that runs with it."""
    return name.startswith(FAKED_SPAWNERS) and spawner_faked(ctx)


def spawner_faked(ctx: Context) -> bool:
    """Whether the function being visited runs with pytest-subprocess's fake spawner, once per function."""
    outer = next((scope.node for scope in ctx.scopes if scope.kind == "function"), None)
    if outer is None:
        return False
    return ctx.per_function(outer, _faked, names=False)  # one answer for the test and its nested defs
