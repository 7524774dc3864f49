"""What a sleep call waits: its duration argument, and whether it is zero."""

from __future__ import annotations

import ast


def duration_argument(call: ast.Call, keyword_names: tuple[str, ...]) -> ast.expr | None:
    if call.args:
        return None if isinstance(call.args[0], ast.Starred) else call.args[0]
    for keyword in call.keywords:
        if keyword.arg in keyword_names:
            return keyword.value
    return None


def is_literal_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 0
