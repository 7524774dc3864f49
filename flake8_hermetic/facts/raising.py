"""Expected failures: a ``with`` that expects the code inside it to raise."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flake8_hermetic.context import Context

#: unittest's raise-expecting methods, usable as a context manager or a call
RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})


def expects_raise(ctx: Context, manager: ast.expr) -> bool:
    """Whether ``manager`` (a ``with`` item) is ``pytest.raises(...)`` or
    ``self.assertRaises*(...)``."""
    if not isinstance(manager, ast.Call):
        return False
    func = manager.func
    if isinstance(func, ast.Attribute) and func.attr in RAISES_METHODS:
        return True
    return ctx.call_name(manager) == "pytest.raises"
