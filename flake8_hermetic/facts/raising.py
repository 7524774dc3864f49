"""Expected failures: a ``with`` that expects the code inside it to raise.

One vocabulary for every family: ``pytest.raises`` (also imported bare as
``raises``) and unittest's ``assertRaises*`` family (``assertRaises``,
``assertRaisesRegex``, ``assertRaisesRegexp``, and a suite's own
``assertRaises...`` helpers), whether called on ``self`` or by name.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from flake8_hermetic.facts.names import last_name

if TYPE_CHECKING:
    from flake8_hermetic.facts.view import FileView

#: unittest's raise-expecting methods, in their call form
#: (``self.assertRaises(OSError, func, *args)``) as well as as managers
RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})
#: pytest's raise-expecting manager, by canonical name and as a bare name
RAISES_MANAGERS = frozenset({"pytest.raises", "raises"})


def expects_raise(ctx: FileView, manager: ast.expr) -> bool:
    """Whether ``manager`` (a ``with`` item) is ``pytest.raises(...)`` or an
    ``assertRaises*(...)`` manager. A test package that re-exports pytest
    (``from . import pytest``) spells it relatively: the leading dots go."""
    if not isinstance(manager, ast.Call):
        return False
    name = (ctx.call_name(manager) or last_name(manager)).lstrip(".")
    return name in RAISES_MANAGERS or name.rpartition(".")[2].startswith("assertRaises")
