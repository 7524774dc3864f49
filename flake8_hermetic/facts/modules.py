"""The module as a file: code that runs only when the file is executed as a
script (``if __name__ == "__main__":``), never when pytest imports it."""

from __future__ import annotations

import ast


def is_main_guard(test: ast.expr) -> bool:
    """Whether an ``if`` test is ``__name__ == "__main__"`` (either way
    round): its body runs when the file is executed as a script, not when
    it is imported."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, *test.comparators]
    names = {side.id for side in sides if isinstance(side, ast.Name)}
    texts = {side.value for side in sides if isinstance(side, ast.Constant)}
    return names == {"__name__"} and texts == {"__main__"}
