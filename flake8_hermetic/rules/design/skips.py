"""A statement that skips the test (HRM501, HRM502)."""

from __future__ import annotations

import ast

from flake8_hermetic.context import Context


SKIP_CALLS = frozenset({"pytest.skip", "pytest.xfail"})
SKIP_EXCEPTIONS = frozenset({"unittest.SkipTest", "unittest.case.SkipTest", "SkipTest", "pytest.skip.Exception"})


def skips(ctx: Context, stmt: ast.stmt) -> bool:
    """``pytest.skip()``, ``pytest.xfail()``, ``self.skipTest()`` or ``raise unittest.SkipTest``
    (also ``raise pytest.skip(...)``, and a pytest re-exported by the test
    package: ``from . import pytest``)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if (ctx.call_name(call) or "").lstrip(".") in SKIP_CALLS:
            return True
        return isinstance(call.func, ast.Attribute) and call.func.attr == "skipTest"
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        name = (ctx.resolve(exc) or "").lstrip(".")
        return name in SKIP_EXCEPTIONS or name in SKIP_CALLS
    return False
