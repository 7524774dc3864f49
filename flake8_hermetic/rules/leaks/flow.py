"""Where a node sits in its function: the statements that run after it,
whether it is the call a test expects to fail, what an ``except`` catches.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.nodes import NEW_FRAMES


def path_to(ctx: Context, node: ast.AST) -> list[ast.AST]:
    """``node`` and its ancestors, outermost first; ``node`` is the node
    being visited or one of its ancestors."""
    for index in range(len(ctx.parents) - 1, -1, -1):
        if ctx.parents[index] is node:
            return ctx.parents[: index + 1]
    return [*ctx.parents, node]


def later_statements(ctx: Context, node: ast.AST) -> Iterator[tuple[ast.stmt, bool]]:
    """The statements that run after ``node``'s statement in its function,
    innermost block first, as (statement, encloses node) pairs: the later
    siblings at each level, and each enclosing ``try`` (whose ``finally``
    runs after it)."""
    chain = path_to(ctx, node)
    for position in range(len(chain) - 1, 0, -1):
        stmt = chain[position]
        holder = chain[position - 1]
        if isinstance(stmt, NEW_FRAMES):
            return
        if not isinstance(stmt, ast.stmt):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            siblings = getattr(holder, field, None)
            if isinstance(siblings, list) and any(s is stmt for s in siblings):
                index = next(i for i, s in enumerate(siblings) if s is stmt)
                for later in siblings[index + 1:]:
                    yield later, False
                break
        if isinstance(holder, ast.Try) or type(holder).__name__ == "TryStar":
            yield holder, True  # type: ignore[misc]


RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})


def _fails(stmt: ast.stmt) -> bool:
    """``self.fail(...)``, ``pytest.fail(...)`` or ``raise``."""
    if isinstance(stmt, ast.Raise):
        return True
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "fail"


def expects_failure(ctx: Context, node: ast.AST) -> bool:
    """``node`` is in the last statement of a ``with self.assertRaises(...)``
    or ``with pytest.raises(...)`` block, or of a ``try`` whose ``else``
    fails the test: the call is the one expected to raise, so whatever it
    would have started or changed never happens."""
    chain = path_to(ctx, node)
    for position in range(len(chain) - 1, 0, -1):
        stmt = chain[position]
        if isinstance(stmt, NEW_FRAMES):
            return False
        if not isinstance(stmt, ast.stmt):
            continue
        holder = chain[position - 1]
        if isinstance(holder, ast.Try) and holder.body[-1] is stmt:
            return bool(holder.handlers) and bool(holder.orelse) and _fails(holder.orelse[0])
        if not isinstance(holder, (ast.With, ast.AsyncWith)) or holder.body[-1] is not stmt:
            return False
        for item in holder.items:
            expr = item.context_expr
            if isinstance(expr, ast.Call):
                func = expr.func
                if isinstance(func, ast.Attribute) and func.attr in RAISES_METHODS:
                    return True
                if ctx.call_name(expr) == "pytest.raises":
                    return True
        return False
    return False


def caught_errors(handler: ast.ExceptHandler) -> list[ast.expr]:
    if handler.type is None:
        return [ast.Name(id="BaseException")]
    if isinstance(handler.type, ast.Tuple):
        return list(handler.type.elts)
    return [handler.type]
