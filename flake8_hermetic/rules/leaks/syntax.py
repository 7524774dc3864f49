"""Small readers of the syntax the HRM1xx rules share: the names an expression
mentions, the names a target binds, a literal boolean keyword.
"""

from __future__ import annotations

import ast

from flake8_hermetic.imports import dotted_name


def mentions(node: ast.AST) -> set[str]:
    """Every name and attribute chain used under ``node`` (``f.name`` gives
    ``f.name`` and ``f``)."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Name, ast.Attribute)):
            text = dotted_name(sub)
            if text is not None:
                found.add(text)
    return found


def target_names(target: ast.AST | None) -> tuple[str, ...]:
    """The names an assignment or ``as`` target binds: ``a``, ``self.a``,
    ``(a, b)``, ``*rest``, and the container of ``self.dirs[k]``."""
    if target is None:
        return ()
    if isinstance(target, (ast.Tuple, ast.List)):
        return tuple(name for element in target.elts for name in target_names(element))
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    if isinstance(target, ast.Subscript):
        target = target.value
    text = dotted_name(target)
    return () if text is None or text == "_" else (text,)


def bool_keyword(call: ast.Call, name: str) -> bool | None:
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant):
            return bool(keyword.value.value)
    return None
