"""What a test without an assertion computes and drops (HRM501's principle ``dropped-outcome``).

A test that asserts nothing and only calls the code under test claims that
the code does not raise: a smoke test, whose check is the call itself. It has
*lost* an assertion when it computes an outcome and then never looks at it:

- a statement that has no effect (``result == 3``, ``x``, ``a + b``);
- a call of a builtin that only computes a value (``repr(obj)``, ``len(rows)``)
  used as a statement;
- a name bound to a call's result (``rows = query()``, ``with patch(...) as
  fake:``) that nothing in the test reads.
"""

from __future__ import annotations

import ast
from flake8_hermetic.nodes import FunctionNode

#: builtins that compute a value and do nothing else: called as a statement, their answer is dropped
PURE_BUILTINS = frozenset(
    {"repr", "str", "ascii", "format", "len", "hash", "bool", "int", "float", "complex", "bytes", "sorted",
     "isinstance", "issubclass", "type", "abs", "min", "max", "sum", "any", "all", "round", "divmod"}
)


def dropped_outcome(function: FunctionNode) -> ast.AST | None:
    """The first place where ``function`` computes an outcome and drops it, or ``None``.

    A class body inside the test binds attributes, not outcomes: its names are read, never judged."""
    bound: list[tuple[str, ast.AST]] = []
    read: set[str] = set()
    pending: list[tuple[ast.AST, bool]] = [(statement, False) for statement in reversed(function.body)]
    while pending:
        node, in_class = pending.pop()
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            read.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            read.update(node.names)  # a name another scope reads
        elif not in_class:
            if isinstance(node, ast.Expr) and _drops_its_value(node.value):
                return node
            bound.extend((name, node) for name in _bound_from_a_call(node))
        inner = in_class or isinstance(node, ast.ClassDef)
        pending.extend((child, inner) for child in reversed(list(ast.iter_child_nodes(node))))
    for name, where in bound:
        if name not in read and not name.startswith("_"):
            return where
    return None


def _bound_from_a_call(node: ast.AST) -> list[str]:
    """The plain names ``node`` binds to a call's result: ``x = f()``, ``x: T = await f()``,
    ``with f() as x``."""
    if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Call, ast.Await)):
        return [target.id for target in node.targets if isinstance(target, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.value, (ast.Call, ast.Await)):
        return [node.target.id] if isinstance(node.target, ast.Name) else []
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [
            item.optional_vars.id
            for item in node.items
            if isinstance(item.optional_vars, ast.Name) and isinstance(item.context_expr, ast.Call)
        ]
    return []


def _drops_its_value(value: ast.expr) -> bool:
    if isinstance(value, ast.Constant):
        return False  # a docstring, a string statement, ``...``
    if isinstance(value, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
        return False
    if isinstance(value, ast.Call):
        func = value.func
        return isinstance(func, ast.Name) and func.id in PURE_BUILTINS
    if isinstance(value, (ast.Subscript, ast.Attribute)):
        return False  # ``data["key"]``, ``obj.attr``: raises on a miss, a check
    if isinstance(value, (ast.Compare, ast.BinOp, ast.UnaryOp, ast.Name)):
        return True  # ``export(1) == 1``: computed, then dropped
    # a comprehension, ``a and run()``, an f-string: a smoke call when it calls something
    return not any(isinstance(inner, (ast.Call, ast.Await)) for inner in ast.walk(value))
