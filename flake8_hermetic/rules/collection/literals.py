"""The text of string literals, as the collection rules read path and pattern arguments."""

from __future__ import annotations

import ast


def literal_head(node: ast.AST) -> str | None:
    """The text of a str literal, or the constant head of an f-string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None
