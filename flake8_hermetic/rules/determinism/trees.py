"""Tree walks the HRM2xx rules share: a subtree short of lambdas, the
(target, value) pairs of an assignment, the names called or read under nodes."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator


def subtree(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and its descendants, not entering lambdas (iterative)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, ast.Lambda):
            stack.extend(ast.iter_child_nodes(current))


def assigned_pairs(node: ast.AST) -> Iterator[tuple[ast.expr, ast.expr]]:
    """(target, value) pairs of an assignment, tuple unpacking paired up."""
    if isinstance(node, ast.Assign):
        pending = [(target, node.value) for target in node.targets]
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        pending = [(node.target, node.value)]
    else:
        return
    while pending:
        target, value = pending.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            elements = target.elts
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(elements) and not any(
                isinstance(e, ast.Starred) for e in elements
            ):
                pending.extend(zip(elements, value.elts))
            else:
                pending.extend((e.value if isinstance(e, ast.Starred) else e, value) for e in elements)
        else:
            yield target, value


def called_names(roots: Iterable[ast.AST]) -> Iterator[str]:
    """Names called anywhere under ``roots``: ``inner()`` -> "inner"."""
    for root in roots:
        for node in subtree(root):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                yield node.func.id


def referenced_names(roots: Iterable[ast.AST]) -> Iterator[str]:
    for root in roots:
        for node in subtree(root):
            if isinstance(node, ast.Name):
                yield node.id
